package broker

import (
	"crypto/x509"
	"fmt"
	"slices"
	"strings"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// The groups (certificate organizations) that say what a client of the embedded broker is. Its name is
// the certificate's common name: a source ID or a consumer name.
const (
	// SourceGroup is the group of a source: hcp-apiserver itself, CN=<source ID>.
	SourceGroup = "hcp:maestro-source"
	// AgentGroup is the group of a maestro-agent, CN=<consumer name>.
	AgentGroup = "hcp:maestro-agent"
)

// role is what a client may do on the broker.
type role string

const (
	roleSource role = "source"
	roleAgent  role = "agent"
)

// identity is who a client is, from its verified certificate.
type identity struct {
	role role
	name string
}

// String is how an identity is logged and kept as the client's MQTT username, e.g. "agent/mc-1".
func (id identity) String() string { return string(id.role) + "/" + id.name }

// parseIdentity reverses String.
func parseIdentity(s string) (identity, bool) {
	r, name, ok := strings.Cut(s, "/")
	if !ok || (role(r) != roleSource && role(r) != roleAgent) || protocol.ValidateID("", name) != nil {
		return identity{}, false
	}
	return identity{role: role(r), name: name}, true
}

// identityFromCertificate reads a client's identity from its verified certificate: exactly one of the
// groups SourceGroup and AgentGroup, and a common name that is a valid ID.
func identityFromCertificate(c *x509.Certificate) (identity, error) {
	source := slices.Contains(c.Subject.Organization, SourceGroup)
	agent := slices.Contains(c.Subject.Organization, AgentGroup)
	var id identity
	switch {
	case source && agent:
		return identity{}, fmt.Errorf("certificate is in both groups %s and %s", SourceGroup, AgentGroup)
	case source:
		id = identity{role: roleSource, name: c.Subject.CommonName}
	case agent:
		id = identity{role: roleAgent, name: c.Subject.CommonName}
	default:
		return identity{}, fmt.Errorf("certificate is in neither group %s nor %s (organizations %q)", SourceGroup, AgentGroup, c.Subject.Organization)
	}
	what := "consumer"
	if id.role == roleSource {
		what = "source"
	}
	if err := protocol.ValidateID(what, id.name); err != nil {
		return identity{}, fmt.Errorf("certificate common name: %w", err)
	}
	return id, nil
}

// mayPublish tells whether id may publish to the topic name topic. It mirrors the permissions of an Azure
// Event Grid namespace set up for Maestro:
//   - a source publishes spec events to any consumer of its own: sources/<its name>/consumers/<any>/sourceevents;
//   - an agent publishes status events as itself, to any source: sources/<any>/consumers/<its name>/agentevents.
func (id identity) mayPublish(topic string) bool {
	source, consumer, kind, err := protocol.ParseTopic(topic)
	if err != nil {
		return false
	}
	switch id.role {
	case roleSource:
		return kind == protocol.SourceEvents && source == id.name
	case roleAgent:
		return kind == protocol.AgentEvents && consumer == id.name
	}
	return false
}

// mayRead tells whether id may subscribe to the filter (or, as mochi also asks before it delivers a
// message, read the topic name) filter:
//   - a source reads its own agent events, from one consumer or all (+), also as a shared subscription:
//     [$share/<group>/]sources/<its name>/consumers/<consumer or +>/agentevents;
//   - an agent reads the spec events addressed to itself, from one source or all (+):
//     sources/<source or +>/consumers/<its name>/sourceevents. A filter that could match another
//     consumer's topic, such as sources/+/consumers/+/sourceevents or #, is refused.
func (id identity) mayRead(filter string) bool {
	if rest, ok := strings.CutPrefix(filter, "$share/"); ok {
		group, f, ok := strings.Cut(rest, "/")
		if id.role != roleSource || !ok || protocol.ValidateID("", group) != nil {
			return false
		}
		filter = f
	}
	parts := strings.Split(filter, "/")
	if len(parts) != 5 || parts[0] != "sources" || parts[2] != "consumers" {
		return false
	}
	source, consumer, kind := parts[1], parts[3], protocol.TopicKind(parts[4])
	switch id.role {
	case roleSource:
		return kind == protocol.AgentEvents && source == id.name && (consumer == "+" || protocol.ValidateID("", consumer) == nil)
	case roleAgent:
		return kind == protocol.SourceEvents && consumer == id.name && (source == "+" || protocol.ValidateID("", source) == nil)
	}
	return false
}
