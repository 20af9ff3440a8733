package azurestandin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/google/uuid"
)

// RecordSet is a DNS record set as the server holds it.
type RecordSet struct {
	// Type is the record type (A, AAAA, CNAME, NS, TXT) and Name the name relative to the zone.
	Type string
	Name string
	ETag string
	TTL  int64
	// Properties are the record set's properties as last written (ARecords, CNAMERecord, ...).
	Properties map[string]any
}

type zone struct {
	id         string
	name       string
	etag       string
	recordSets map[string]*RecordSet // by recordSetKey
}

// servedRecordTypes are the record types the server keeps; the documents name others (MX, SRV, ...)
// that the service has no use for.
var servedRecordTypes = map[string]bool{"A": true, "AAAA": true, "CNAME": true, "NS": true, "TXT": true}

func recordSetKey(recordType, name string) string {
	return recordType + "/" + strings.ToLower(name)
}

// AddZone makes the DNS zone of that resource ID exist, empty, as the service's own zone would.
func (s *Server) AddZone(resourceID string) {
	parts := strings.Split(strings.Trim(resourceID, "/"), "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.zones[strings.ToLower(resourceID)] = &zone{
		id: resourceID, name: parts[len(parts)-1], etag: uuid.NewString(), recordSets: map[string]*RecordSet{},
	}
}

// RecordSets returns the record sets of a zone, keyed by "<type>/<relative name>" (the name in
// lower case, as DNS names compare).
func (s *Server) RecordSets(zoneID string) map[string]RecordSet {
	s.mu.Lock()
	defer s.mu.Unlock()
	z, ok := s.zones[strings.ToLower(zoneID)]
	if !ok {
		return nil
	}
	out := make(map[string]RecordSet, len(z.recordSets))
	for k, rs := range z.recordSets {
		out[k] = *rs
	}
	return out
}

func zoneID(p map[string]string) string {
	return resourceGroupID(p) + "/providers/Microsoft.Network/dnszones/" + p["zoneName"]
}

// zoneOf finds a request's zone, answering 404 as Azure DNS does when it is not there; s.mu is held.
func (s *Server) zoneOf(w http.ResponseWriter, p map[string]string) *zone {
	z, ok := s.zones[strings.ToLower(zoneID(p))]
	if !ok {
		writeError(w, http.StatusNotFound, "ResourceNotFound", "", fmt.Sprintf(
			"The Resource 'Microsoft.Network/dnszones/%s' under resource group '%s' was not found.", p["zoneName"], p["resourceGroupName"]))
		return nil
	}
	return z
}

func (s *Server) getZone(w http.ResponseWriter, r *http.Request, p map[string]string, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.zoneOf(w, p)
	if z == nil {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":       z.id,
		"name":     z.name,
		"type":     "Microsoft.Network/dnszones",
		"location": "global",
		"etag":     z.etag,
		"properties": map[string]any{
			"maxNumberOfRecordSets": 10000,
			"numberOfRecordSets":    len(z.recordSets) + 2, // Azure counts the zone's own SOA and NS
			"nameServers":           []string{"ns1-01.azure-dns.com.", "ns2-01.azure-dns.net.", "ns3-01.azure-dns.org.", "ns4-01.azure-dns.info."},
			"zoneType":              "Public",
		},
	})
}

func (z *zone) recordSetBody(rs *RecordSet) map[string]any {
	props := map[string]any{}
	for k, v := range rs.Properties {
		props[k] = v
	}
	fqdn := z.name + "."
	if rs.Name != "@" {
		fqdn = rs.Name + "." + fqdn
	}
	props["fqdn"] = fqdn
	props["provisioningState"] = "Succeeded"
	return map[string]any{
		"id":         z.id + "/" + rs.Type + "/" + rs.Name,
		"name":       rs.Name,
		"type":       "Microsoft.Network/dnszones/" + rs.Type,
		"etag":       rs.ETag,
		"properties": props,
	}
}

// servedType answers 400 for a record type that the documents allow but the server does not keep.
func servedType(w http.ResponseWriter, p map[string]string) bool {
	if !servedRecordTypes[p["recordType"]] {
		writeError(w, http.StatusBadRequest, "NotImplemented", "recordType", fmt.Sprintf("the Azure stand-in does not keep %s record sets", p["recordType"]))
		return false
	}
	return true
}

func (s *Server) getRecordSet(w http.ResponseWriter, r *http.Request, p map[string]string, _ []byte) {
	if !servedType(w, p) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.zoneOf(w, p)
	if z == nil {
		return
	}
	rs, ok := z.recordSets[recordSetKey(p["recordType"], p["relativeRecordSetName"])]
	if !ok {
		writeError(w, http.StatusNotFound, "NotFound", "", fmt.Sprintf("The resource record '%s' does not exist in resource group '%s' of subscription '%s'.",
			p["relativeRecordSetName"], p["resourceGroupName"], p["subscriptionId"]))
		return
	}
	writeJSON(w, http.StatusOK, z.recordSetBody(rs))
}

// putRecordSet creates or replaces a record set, honouring If-Match (the set's etag must be the one
// given) and If-None-Match: * (the set must not exist), with 412 otherwise, as Azure DNS does.
func (s *Server) putRecordSet(w http.ResponseWriter, r *http.Request, p map[string]string, body []byte) {
	if !servedType(w, p) {
		return
	}
	var in struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, http.StatusBadRequest, "InvalidRequestContent", "", err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.zoneOf(w, p)
	if z == nil {
		return
	}
	key := recordSetKey(p["recordType"], p["relativeRecordSetName"])
	old, exists := z.recordSets[key]
	if !preconditionsHold(w, r, old) {
		return
	}
	props := map[string]any{}
	for k, v := range in.Properties {
		switch k {
		case "fqdn", "provisioningState", "targetResource":
			// read-only, or not kept
		default:
			props[k] = v
		}
	}
	var ttl int64
	if v, ok := props["TTL"].(float64); ok {
		ttl = int64(v)
	}
	rs := &RecordSet{Type: p["recordType"], Name: p["relativeRecordSetName"], ETag: uuid.NewString(), TTL: ttl, Properties: props}
	z.recordSets[key] = rs
	status := http.StatusCreated
	if exists {
		status = http.StatusOK
	}
	writeJSON(w, status, z.recordSetBody(rs))
}

// preconditionsHold checks If-Match and If-None-Match against the record set (nil if there is none).
func preconditionsHold(w http.ResponseWriter, r *http.Request, rs *RecordSet) bool {
	if match := r.Header.Get("If-Match"); match != "" {
		if rs == nil || (match != "*" && strings.Trim(match, `"`) != rs.ETag) {
			writeError(w, http.StatusPreconditionFailed, "PreconditionFailed", "",
				"The condition '"+match+"' in the If-Match header was not satisfied. The current was '"+etagOf(rs)+"'.")
			return false
		}
	}
	if r.Header.Get("If-None-Match") == "*" && rs != nil {
		writeError(w, http.StatusPreconditionFailed, "PreconditionFailed", "",
			"The condition '*' in the If-None-Match header was not satisfied. The current was '"+rs.ETag+"'.")
		return false
	}
	return true
}

func etagOf(rs *RecordSet) string {
	if rs == nil {
		return "n/a"
	}
	return rs.ETag
}

func (s *Server) deleteRecordSet(w http.ResponseWriter, r *http.Request, p map[string]string, _ []byte) {
	if !servedType(w, p) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.zoneOf(w, p)
	if z == nil {
		return
	}
	key := recordSetKey(p["recordType"], p["relativeRecordSetName"])
	rs, exists := z.recordSets[key]
	if r.Header.Get("If-Match") != "" && !preconditionsHold(w, r, rs) {
		return
	}
	if !exists {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	delete(z.recordSets, key)
	w.WriteHeader(http.StatusOK)
}

func (s *Server) listRecordSets(w http.ResponseWriter, r *http.Request, p map[string]string, _ []byte) {
	if !servedType(w, p) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.zoneOf(w, p)
	if z == nil {
		return
	}
	suffix := strings.ToLower(r.URL.Query().Get("$recordsetnamesuffix"))
	var names []string
	for _, rs := range z.recordSets {
		if rs.Type == p["recordType"] && strings.HasSuffix(strings.ToLower(rs.Name), suffix) {
			names = append(names, recordSetKey(rs.Type, rs.Name))
		}
	}
	sort.Strings(names)
	value := []any{}
	for _, k := range names {
		value = append(value, z.recordSetBody(z.recordSets[k]))
	}
	writeJSON(w, http.StatusOK, map[string]any{"value": value})
}
