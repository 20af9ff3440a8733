// Package azurestandin is a TEST DOUBLE. It is not Azure and provisions nothing.
//
// Azure cannot be reached from tests, so this server stands in for the parts of it that the
// service's Azure clients (the Azure SDK for Go: azcore, azidentity, armresources, armmsi,
// armauthorization/v2, and an azcore pipeline for Azure DNS) call. Start runs it over HTTPS with a
// self-signed CA (CertPool, Client) as both the Entra ID authority and the Resource Manager endpoint:
//
//   - Entra ID: the tenant's OpenID configuration and its token endpoint, which issues an access
//     token for any client credential grant (a secret or an assertion, so ClientSecretCredential,
//     ClientCertificateCredential and WorkloadIdentityCredential all work with
//     DisableInstanceDiscovery). Every other request needs a live token it issued, else 401 as ARM
//     answers it.
//   - Resource groups (resources.json, 2021-04-01): PUT, GET, HEAD, and DELETE as ARM runs it: 202
//     with a Location to poll, which answers 202 until the group is gone (Options say after how many
//     polls or how long), then 200.
//   - User-assigned managed identities (ManagedIdentity.json, 2023-01-31): GET of those the test
//     made with AddIdentity. armmsi v1.3.0 sends api-version 2024-11-30, which has no document
//     here, so its clients need arm.ClientOptions.APIVersion "2023-01-31" to be served.
//   - Role assignments (authorization-RoleAssignmentsCalls.json, 2022-04-01): list at a scope with
//     the $filter terms atScope(), assignedTo('id') and principalId eq 'id' (assignments above the
//     scope apply to it, as in Azure), and GET, PUT and DELETE by name; AddRoleAssignment seeds them.
//   - Azure DNS (dns.json, 2018-05-01): GET of the zones made with AddZone; PUT, GET, DELETE and
//     list of A, AAAA, CNAME, NS and TXT record sets, with etags, If-Match and If-None-Match: * as
//     Azure DNS honours them (412 PreconditionFailed). RecordSets reads them back.
//
// Every request is checked against the Azure REST API documents in the project's shared folder
// (shared/azure, from azure-rest-api-specs), with go-openapi/validate: its path must be an operation
// of a document, its api-version the document's, its path and query parameters and its body what the
// operation declares. A request they refuse is answered 400 with an ARM error naming every problem,
// and recorded (Violations); the test fails at its end if there was any, so a request the real Azure
// would refuse fails the test even when the code under test coped with the 400. The server's own
// answers are checked against the same documents by its tests.
//
// Throttle, Unavailable and Hang make it answer as a busy or failing Azure would (429 with
// Retry-After, 503, no answer); Requests lists what it answered, so tests can count retries and
// check that nothing was created twice. Errors have ARM's shape and codes (ResourceNotFound,
// ResourceGroupNotFound, InvalidRequestContent, PreconditionFailed, TooManyRequests, ...).
package azurestandin
