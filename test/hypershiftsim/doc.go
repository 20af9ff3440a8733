// Package hypershiftsim is a TEST DOUBLE. It is not HyperShift and runs nothing.
//
// The HyperShift operator cannot run on the test management cluster (a bare
// kube-apiserver with the HyperShift CRDs installed), so this simulator stands in
// for it. It watches HostedClusters, NodePools, break-glass
// CertificateSigningRequests, CertificateRevocationRequests and the Secrets of the
// hosted clusters' stand-in openshift-config namespaces, and writes the
// objects and status the real operators would write, so that the code delivering
// and watching HyperShift manifests can be tested end to end:
//
//   - HostedCluster: the hypershift.openshift.io/finalizer, the control-plane
//     namespace <namespace>-<name> with the ConfigMap root-ca (ca.crt: a
//     self-signed CA certificate, made once per control plane) and two LoadBalancer Services there, router
//     (HyperShift's control-plane router, which serves the API's Route) and default-ingress (standing for
//     the hosted cluster's default ingress, *.apps), each given an address from a documentation range
//     the first time, as a cloud's load balancer controller would (an address a test writes is kept),
//     then status as the operator reports it
//     (Available, Progressing, Degraded and the other conditions, version and
//     controlPlaneVersion history going Partial -> Completed, controlPlaneEndpoint,
//     the <name>-admin-kubeconfig Secret). A change of spec.release.image is an
//     upgrade: a new Partial history entry and Progressing=True, Completed after
//     Options.UpgradeDelay.
//   - Control-plane pods and events (what a kubelet and scheduler would write, as none runs on the
//     test management cluster): in the control-plane namespace, the stand-in pods etcd-0,
//     kube-apiserver-<hash>-<suffix> (containers kube-apiserver and audit-logs) and
//     kube-controller-manager-<hash>-<suffix>, labelled app=<component> as HyperShift's are
//     (ControlPlanePodName), bound to the made-up node NodeName, with the namespace's default
//     ServiceAccount they need (the ServiceAccount admission refuses a pod without it, even one that
//     mounts no token). Their status goes ContainerCreating while the install is under way, then
//     Running and Ready; for a NeverAvailable HostedCluster kube-apiserver waits in CrashLoopBackOff
//     with a restartCount that goes up each CrashLoopPeriod and etcd-0 runs without being Ready.
//     Events: the kubelet's Normal Started for etcd and kube-apiserver; for a NeverAvailable one also
//     its Warning BackOff on the kube-apiserver pod (count and lastTimestamp follow the restarts; no
//     new event per sync) and the hypershift-operator's Warning on the HostedCluster's failing
//     condition (KubeAPIServerAvailable). The pods have a termination grace period of 0, so the
//     namespace controller deletes them at once with the namespace, though no kubelet confirms it.
//   - NodePool: the finalizer; Ready with status.replicas and status.version once
//     its HostedCluster is Available; UpdatingVersion while its release changes.
//   - Break-glass credentials (the control-plane PKI operator's part): a CSR whose
//     signer is hypershift.openshift.io/<hcp-namespace>.customer-break-glass (or
//     .sre-break-glass) is approved when a CertificateSigningRequestApproval of the
//     same name exists in <hcp-namespace>, then signed by a per-cluster CA kept in
//     the Secret customer-system-admin-signer (sre-system-admin-signer) there.
//     A CertificateRevocationRequest rotates that CA and walks its conditions
//     SignerClassValid, RootCertificatesRegenerated, NewCertificatesTrusted,
//     LeafCertificatesRegenerated and PreviousCertificatesRevoked to True.
//   - OIDC clients (the hosted cluster's components, such as the console operator): for a
//     HostedCluster with spec.configuration.authentication of type OIDC, once it is
//     Available, status.configuration.authentication.oidcClients has an entry per client of
//     its provider (componentName, componentNamespace, currentOIDCClients and the
//     conditions Available, Progressing and Degraded), as HyperShift copies it from the
//     hosted cluster. The hosted cluster does not exist here: the namespace
//     HostedConfigNamespace(namespace, name) of the management cluster, which the simulator
//     creates, stands in for its openshift-config. A confidential client whose Secret
//     (spec's clientSecret.name) is not there is Available=False and Degraded=True, with
//     reason OIDCClientSecretGet and a message naming openshift-config/<secret>; a
//     confidential client with its Secret, and a public client, is Available=True. The
//     simulator watches those Secrets, so creating or deleting one updates the status at
//     once. Without an OIDC provider there is no status.configuration.
//   - Deletion: the finalizers are removed (after Options.DeletionDelay), once the
//     HostedCluster's NodePools are gone; the control-plane namespace and the stand-in
//     for the hosted cluster's openshift-config are deleted.
//
// Delays and failures (a HostedCluster that never becomes Available, a Degraded
// one, a NodePool that is never Ready, an unknown release image) are set in
// Options, so tests can cover the unhappy paths too.
//
// Object names, condition types, reasons and messages follow HyperShift (at the
// commit of the CRDs in shared/hypershift/crds) and the examples beside them;
// every status it writes is accepted by those CRDs.
package hypershiftsim
