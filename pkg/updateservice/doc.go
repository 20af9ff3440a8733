// Package updateservice follows the OpenShift update service (Cincinnati): it polls the update
// graph of each configured channel (GET <url>/api/upgrades_info/v1/graph?channel=stable-4.20&arch=amd64),
// checks every answer, and hands the server one graph of all of them, in the same wire format, each
// time it changes. The last good graph is kept in a Store (etcd), so a restarted server serves it
// before the update service answers, and serves it on while the service is down or sends garbage.
package updateservice
