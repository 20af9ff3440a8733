package azure

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
)

const (
	dnsModule     = "github.com/aro-hcp/hcp-apiserver/pkg/azure"
	dnsModuleVer  = "v0.1.0"
	dnsAPIVersion = "2018-05-01"
)

// Record types the service writes.
const (
	RecordTypeA     = "A"
	RecordTypeAAAA  = "AAAA"
	RecordTypeCNAME = "CNAME"
	RecordTypeNS    = "NS"
	RecordTypeTXT   = "TXT"
)

// Zone is the part of a DNS zone the service reads: its name servers, which a custom domain
// delegates to.
type Zone struct {
	ID         string            `json:"id,omitempty"`
	Name       string            `json:"name,omitempty"`
	Type       string            `json:"type,omitempty"`
	Location   string            `json:"location,omitempty"`
	Tags       map[string]string `json:"tags,omitempty"`
	Etag       string            `json:"etag,omitempty"`
	Properties ZoneProperties    `json:"properties"`
}

// ZoneProperties are what Azure DNS reports of a zone; NameServers are the ones a parent zone
// delegates to.
type ZoneProperties struct {
	MaxNumberOfRecordSets int64    `json:"maxNumberOfRecordSets,omitempty"`
	NumberOfRecordSets    int64    `json:"numberOfRecordSets,omitempty"`
	NameServers           []string `json:"nameServers,omitempty"`
	ZoneType              string   `json:"zoneType,omitempty"`
}

// RecordSet is the records of one name and type. Etag is what Azure returned; pass it back as
// ifMatch to change the set only if no one else has since.
type RecordSet struct {
	ID         string              `json:"id,omitempty"`
	Name       string              `json:"name,omitempty"`
	Type       string              `json:"type,omitempty"`
	Etag       string              `json:"etag,omitempty"`
	Properties RecordSetProperties `json:"properties"`
}

// RecordSetProperties keeps the wire's field names, whose capitals are the contract's.
type RecordSetProperties struct {
	Metadata          map[string]string `json:"metadata,omitempty"`
	TTL               int64             `json:"TTL,omitempty"`
	FQDN              string            `json:"fqdn,omitempty"`
	ProvisioningState string            `json:"provisioningState,omitempty"`
	ARecords          []ARecord         `json:"ARecords,omitempty"`
	AAAARecords       []AAAARecord      `json:"AAAARecords,omitempty"`
	CNAMERecord       *CNAMERecord      `json:"CNAMERecord,omitempty"`
	NSRecords         []NSRecord        `json:"NSRecords,omitempty"`
	TXTRecords        []TXTRecord       `json:"TXTRecords,omitempty"`
}

// ARecord, AAAARecord, CNAMERecord, NSRecord and TXTRecord are the records of those types, spelt
// as the API spells them.
type ARecord struct {
	IPv4Address string `json:"ipv4Address,omitempty"`
}

type AAAARecord struct {
	IPv6Address string `json:"ipv6Address,omitempty"`
}

type CNAMERecord struct {
	CNAME string `json:"cname,omitempty"`
}

type NSRecord struct {
	NSDName string `json:"nsdname,omitempty"`
}

type TXTRecord struct {
	Value []string `json:"value,omitempty"`
}

type recordSetList struct {
	Value    []RecordSet `json:"value"`
	NextLink string      `json:"nextLink,omitempty"`
}

// DNSClient reads zones and writes record sets through Azure DNS's REST API. It is written on
// azcore's pipeline because the SDK's DNS module is not available to this build.
type DNSClient struct {
	pipeline runtime.Pipeline
	endpoint string
}

// NewDNSClient builds the client with the same cloud, transport, retry and credential as the
// SDK's ARM clients: a bearer token for Resource Manager's audience, retries that honour
// Retry-After on 429 and 503.
func NewDNSClient(cred azcore.TokenCredential, options *arm.ClientOptions) (*DNSClient, error) {
	if options == nil {
		options = &arm.ClientOptions{}
	}
	cloudCfg := options.Cloud
	if cloudCfg.Services == nil {
		cloudCfg = cloud.AzurePublic
	}
	rm, ok := cloudCfg.Services[cloud.ResourceManager]
	if !ok || rm.Endpoint == "" || rm.Audience == "" {
		return nil, fmt.Errorf("the cloud configuration has no Resource Manager endpoint and audience")
	}
	scope := strings.TrimSuffix(rm.Audience, "/") + "/.default"
	pl := runtime.NewPipeline(dnsModule, dnsModuleVer, runtime.PipelineOptions{
		PerRetry: []policy.Policy{runtime.NewBearerTokenPolicy(cred, []string{scope}, nil)},
	}, &options.ClientOptions)
	return &DNSClient{pipeline: pl, endpoint: rm.Endpoint}, nil
}

// GetZone reads the zone zoneID.
func (c *DNSClient) GetZone(ctx context.Context, zoneID string) (Zone, error) {
	path, err := zonePath(zoneID)
	if err != nil {
		return Zone{}, err
	}
	var zone Zone
	if err := c.do(ctx, http.MethodGet, path, nil, nil, &zone, http.StatusOK); err != nil {
		return Zone{}, err
	}
	return zone, nil
}

// GetRecordSet reads one record set; a missing one is an error that IsNotFound recognizes.
func (c *DNSClient) GetRecordSet(ctx context.Context, zoneID, recordType, relativeName string) (RecordSet, error) {
	path, err := recordSetPath(zoneID, recordType, relativeName)
	if err != nil {
		return RecordSet{}, err
	}
	var rs RecordSet
	if err := c.do(ctx, http.MethodGet, path, nil, nil, &rs, http.StatusOK); err != nil {
		return RecordSet{}, err
	}
	return rs, nil
}

// PutRecordSet creates or replaces a record set. With ifMatch, only the set at that etag is
// replaced; with ifNoneMatch, only a set that does not exist yet is created. Either failing is an
// error that IsPreconditionFailed recognizes.
func (c *DNSClient) PutRecordSet(ctx context.Context, zoneID, recordType, relativeName string, rs RecordSet, ifMatch string, ifNoneMatch bool) (RecordSet, error) {
	path, err := recordSetPath(zoneID, recordType, relativeName)
	if err != nil {
		return RecordSet{}, err
	}
	headers := map[string]string{}
	if ifMatch != "" {
		headers["If-Match"] = ifMatch
	}
	if ifNoneMatch {
		headers["If-None-Match"] = "*"
	}
	// Only properties are the caller's to set; the rest are Azure's.
	body := RecordSet{Properties: rs.Properties}
	body.Properties.FQDN, body.Properties.ProvisioningState = "", ""
	var out RecordSet
	if err := c.do(ctx, http.MethodPut, path, headers, body, &out, http.StatusOK, http.StatusCreated); err != nil {
		return RecordSet{}, err
	}
	return out, nil
}

// DeleteRecordSet deletes a record set, only at etag ifMatch when given. A set that is already
// gone is deleted.
func (c *DNSClient) DeleteRecordSet(ctx context.Context, zoneID, recordType, relativeName, ifMatch string) error {
	path, err := recordSetPath(zoneID, recordType, relativeName)
	if err != nil {
		return err
	}
	headers := map[string]string{}
	if ifMatch != "" {
		headers["If-Match"] = ifMatch
	}
	err = c.do(ctx, http.MethodDelete, path, headers, nil, nil, http.StatusOK, http.StatusNoContent)
	if IsNotFound(err) {
		return nil
	}
	return err
}

// ListRecordSets returns every record set of recordType in the zone, following nextLink.
func (c *DNSClient) ListRecordSets(ctx context.Context, zoneID, recordType string) ([]RecordSet, error) {
	zone, err := zonePath(zoneID)
	if err != nil {
		return nil, err
	}
	if err := checkRecordType(recordType); err != nil {
		return nil, err
	}
	pager := runtime.NewPager(runtime.PagingHandler[recordSetList]{
		More: func(page recordSetList) bool { return page.NextLink != "" },
		Fetcher: func(ctx context.Context, page *recordSetList) (recordSetList, error) {
			var req *policy.Request
			var err error
			if page == nil {
				req, err = c.newRequest(ctx, http.MethodGet, zone+"/"+recordType)
			} else {
				// nextLink carries its own api-version and continuation token.
				req, err = runtime.NewRequest(ctx, http.MethodGet, page.NextLink)
				if err == nil {
					req.Raw().Header.Set("Accept", "application/json")
				}
			}
			if err != nil {
				return recordSetList{}, err
			}
			var out recordSetList
			err = c.send(req, &out, http.StatusOK)
			return out, err
		},
	})
	var all []RecordSet
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Value...)
	}
	return all, nil
}

func (c *DNSClient) newRequest(ctx context.Context, method, path string) (*policy.Request, error) {
	req, err := runtime.NewRequest(ctx, method, runtime.JoinPaths(c.endpoint, path))
	if err != nil {
		return nil, err
	}
	q := req.Raw().URL.Query()
	q.Set("api-version", dnsAPIVersion)
	req.Raw().URL.RawQuery = q.Encode()
	req.Raw().Header.Set("Accept", "application/json")
	return req, nil
}

func (c *DNSClient) do(ctx context.Context, method, path string, headers map[string]string, body, out any, ok ...int) error {
	req, err := c.newRequest(ctx, method, path)
	if err != nil {
		return err
	}
	for k, v := range headers {
		req.Raw().Header.Set(k, v)
	}
	if body != nil {
		if err := runtime.MarshalAsJSON(req, body); err != nil {
			return err
		}
	}
	return c.send(req, out, ok...)
}

func (c *DNSClient) send(req *policy.Request, out any, ok ...int) error {
	resp, err := c.pipeline.Do(req)
	if err != nil {
		return err
	}
	if !runtime.HasStatusCode(resp, ok...) {
		return cloudError(runtime.NewResponseError(resp))
	}
	if out == nil {
		return nil
	}
	if err := runtime.UnmarshalAsJSON(resp, out); err != nil {
		return fmt.Errorf("decoding %s %s: %w", req.Raw().Method, req.Raw().URL.Path, err)
	}
	return nil
}

// zonePath is the zone's ID as ARM spells it, checked to be a DNS zone.
func zonePath(zoneID string) (string, error) {
	rid, err := parseZoneID(zoneID)
	if err != nil {
		return "", fmt.Errorf("DNS zone %q: %w", zoneID, err)
	}
	return "/subscriptions/" + url.PathEscape(rid.SubscriptionID) +
		"/resourceGroups/" + url.PathEscape(rid.ResourceGroupName) +
		"/providers/Microsoft.Network/dnsZones/" + url.PathEscape(rid.Name), nil
}

func recordSetPath(zoneID, recordType, relativeName string) (string, error) {
	zone, err := zonePath(zoneID)
	if err != nil {
		return "", err
	}
	if err := checkRecordType(recordType); err != nil {
		return "", err
	}
	if relativeName == "" {
		return "", fmt.Errorf("a record set needs a name relative to the zone; the zone's apex is @")
	}
	return zone + "/" + recordType + "/" + url.PathEscape(relativeName), nil
}

func checkRecordType(recordType string) error {
	switch recordType {
	case RecordTypeA, RecordTypeAAAA, RecordTypeCNAME, RecordTypeNS, RecordTypeTXT:
		return nil
	}
	return fmt.Errorf("record type %q is not one of A, AAAA, CNAME, NS, TXT", recordType)
}
