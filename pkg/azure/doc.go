// Package azure holds the service's clients for the Azure resources it provisions for each
// cluster, and the configuration (--azure-config) that says which cloud, tenant, subscription,
// DNS zone and credential they use.
//
//   - ResourceGroupsClient (armresources, api-version 2021-04-01) creates a cluster's managed
//     resource group in the customer's subscription, tagged with OwnershipTag, and deletes it as a
//     long-running operation a restarted server can resume. It never adopts or deletes a group
//     whose tag names another cluster, or none.
//   - IdentitiesClient (armmsi pinned to api-version 2023-01-31; armauthorization/v2, api-version
//     2022-04-01) reads the customer's operator managed identities and finds the roles they lack.
//   - DNSClient (Azure DNS, api-version 2018-05-01) reads the service's regional zone and writes
//     the API and *.apps record sets and a custom domain's NS delegation, with ETags so that
//     concurrent writers do not overwrite each other. It is written here on azcore's pipeline
//     because the SDK's DNS module is not served by the module proxy this project builds from.
//
// Errors that Azure returns are *CloudError, which keeps ARM's code, message, target and details
// for a condition's message; IsNotFound and IsPreconditionFailed sort them.
package azure
