package agent

import (
	"encoding/json"
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// An answer is one JsonRaw feedback value, so it fits MaxJSONRawLength: what does not fit is left out
// from the end a reader needs least (the last items: the oldest events, the last pods by name; the start
// of a log), and the answer says so with Truncated and Omitted.

// inspectionValue returns the answer, cut to fit, as the feedback value InspectionFeedbackName.
func inspectionValue(answer protocol.InspectionAnswer) protocol.FeedbackValue {
	raw := fitAnswer(answer, MaxJSONRawLength)
	s := string(raw)
	return protocol.FeedbackValue{Name: protocol.InspectionFeedbackName, Value: protocol.FieldValue{Type: protocol.ValueJSONRaw, JSONRaw: &s}}
}

// fitAnswer encodes the answer in at most limit bytes of JSON.
func fitAnswer(answer protocol.InspectionAnswer, limit int) []byte {
	if raw := encodeAnswer(answer); len(raw) <= limit {
		return raw
	}
	answer.Truncated = true
	if answer.Log != "" {
		return fitLog(answer, limit)
	}
	return fitItems(answer, limit)
}

// fitItems keeps the most items, from the first, that fit with Omitted saying how many are left out.
// An item that does not fit alone is replaced by a stub that says so.
func fitItems(answer protocol.InspectionAnswer, limit int) []byte {
	all := answer.Items
	items := make([]json.RawMessage, len(all))
	for i, item := range all {
		items[i] = item
		alone := answer
		alone.Items, alone.Omitted = []json.RawMessage{item}, len(all)
		if len(encodeAnswer(alone)) > limit {
			items[i] = itemStub(item, limit)
		}
	}
	fits := func(kept int) []byte {
		a := answer
		a.Items, a.Omitted = items[:kept], len(items)-kept
		if raw := encodeAnswer(a); len(raw) <= limit {
			return raw
		}
		return nil
	}
	// The most items that fit: fewer items always encode shorter.
	kept := sort.Search(len(items)+1, func(n int) bool { return fits(n) == nil }) - 1
	if raw := fits(max(kept, 0)); raw != nil {
		return raw
	}
	// Not even an empty answer fits: only an absurd error message can do that.
	answer.Items, answer.Omitted, answer.Error = nil, len(items), "the answer does not fit the feedback limit"
	return encodeAnswer(answer)
}

// itemStub stands for an item too big for an answer: its kind and name, and why the rest is missing.
func itemStub(item json.RawMessage, limit int) json.RawMessage {
	var named struct {
		Kind     string `json:"kind,omitempty"`
		Metadata struct {
			Name      string `json:"name,omitempty"`
			Namespace string `json:"namespace,omitempty"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(item, &named)
	stub := struct {
		Kind      string `json:"kind,omitempty"`
		Metadata  any    `json:"metadata"`
		Truncated string `json:"truncated"`
	}{named.Kind, named.Metadata, fmt.Sprintf("left out: this item is %d bytes of JSON, more than the %d of an answer", len(item), limit)}
	raw, _ := json.Marshal(stub)
	return raw
}

// fitLog keeps the end of the log: it drops whole lines from its start until the answer fits, with
// Omitted the bytes dropped. A last line too long alone is cut, its end kept.
func fitLog(answer protocol.InspectionAnswer, limit int) []byte {
	log := answer.Log
	fits := func(start int) []byte {
		a := answer
		a.Log, a.Omitted = log[start:], start
		if raw := encodeAnswer(a); len(raw) <= limit {
			return raw
		}
		return nil
	}
	// The starts of lines after the first: keeping the lines from a later one encodes shorter.
	var starts []int
	for i := 0; i+1 < len(log); i++ {
		if log[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	if n := sort.Search(len(starts), func(j int) bool { return fits(starts[j]) != nil }); n < len(starts) {
		return fits(starts[n])
	}
	// Even the last line does not fit: keep the end of it, from a character's start.
	last := 0
	if len(starts) > 0 {
		last = starts[len(starts)-1]
	}
	start := last + sort.Search(len(log)-last, func(j int) bool { return fits(last+j) != nil })
	for start < len(log) && !utf8.RuneStart(log[start]) {
		start++
	}
	if raw := fits(start); raw != nil {
		return raw
	}
	answer.Log, answer.Omitted = "", len(log)
	return encodeAnswer(answer)
}

func encodeAnswer(answer protocol.InspectionAnswer) []byte {
	raw, err := json.Marshal(answer)
	if err != nil {
		// Only an item that is no JSON fails, and the views encode every item themselves.
		raw, _ = json.Marshal(map[string]string{"view": string(answer.View), "error": "encoding the answer: " + err.Error()})
	}
	return raw
}
