package conversion

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestTagLimits applies ARM's limits on tags to clusters and node pools, at create and at update (a
// PATCH is a PUT of the merged resource): every broken limit is an error of its own, named tags or
// tags.<name>, so that the caller gets them all in one answer.
func TestTagLimits(t *testing.T) {
	many := func(n int) map[string]string {
		tags := map[string]string{}
		for i := range n {
			tags[fmt.Sprintf("t%02d", i)] = "v"
		}
		return tags
	}
	tests := []struct {
		name string
		tags map[string]string
		// want are the errors' paths and a word of each message.
		want []string
	}{
		{name: "50 tags", tags: many(50)},
		{name: "names and values at their limits", tags: map[string]string{strings.Repeat("n", 512): strings.Repeat("v", 256), "ü": strings.Repeat("é", 256), "e": ""}},
		{name: "51 tags", tags: many(51), want: []string{"tags: Too many: 51"}},
		{name: "60 tags", tags: many(60), want: []string{"tags: Too many: 60: must have at most 50 items"}},
		{name: "an empty name", tags: map[string]string{"": "v"}, want: []string{"tags: Invalid value: \"\": a tag name must be 1 to 512 characters"}},
		{name: "a name of 513 characters", tags: map[string]string{strings.Repeat("n", 513): "v"}, want: []string{"tags: Invalid value"}},
		{name: "a value of 300 characters", tags: map[string]string{"env": strings.Repeat("v", 300)}, want: []string{"tags.env: Too long"}},
		{name: "a value of 257 characters", tags: map[string]string{"env": strings.Repeat("é", 257)}, want: []string{"tags.env: Too long"}},
		{name: "forbidden characters", tags: map[string]string{"a<b": "v", "c>d": "v", "e%f": "v", "g&h": "v", `i\j`: "v", "k?l": "v", "m/n": "v"},
			want: []string{"tags.a<b: Invalid", "tags.c>d: Invalid", "tags.e%f: Invalid", "tags.g&h: Invalid", `tags.i\j: Invalid`, "tags.k?l: Invalid", "tags.m/n: Invalid"}},
		{name: "every limit at once", tags: func() map[string]string {
			tags := many(59)
			tags[""] = "v"
			tags["big"] = strings.Repeat("v", 300)
			return tags
		}(), want: []string{"tags: Too many: 61", "tags: Invalid value: \"\"", "tags.big: Too long"}},
	}
	for _, tt := range tests {
		for _, kind := range []string{"cluster", "node pool"} {
			for _, update := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/update=%v", tt.name, kind, update), func(t *testing.T) {
					var body map[string]any
					var errs []string
					if kind == "cluster" {
						body = jsonMap(t, []byte(fullClusterBody))
						var existing = createCluster(t, V20260901Preview, fullClusterBody)
						if !update {
							existing = nil
						}
						body["tags"] = tt.tags
						_, fieldErrs := ClusterFromARM(Request{APIVersion: V20260901Preview, ResourceID: testClusterID, Body: mustJSON(t, body)}, existing)
						for _, e := range fieldErrs {
							errs = append(errs, e.Error())
						}
					} else {
						body = jsonMap(t, []byte(fullNodePoolBody))
						var existing = createNodePool(t, V20260901Preview, fullNodePoolBody)
						if !update {
							existing = nil
						}
						body["tags"] = tt.tags
						_, fieldErrs := NodePoolFromARM(Request{APIVersion: V20260901Preview, ResourceID: testPoolID, Body: mustJSON(t, body)}, existing)
						for _, e := range fieldErrs {
							errs = append(errs, e.Error())
						}
					}
					if len(errs) != len(tt.want) {
						t.Fatalf("errors %q, want %d: %q", errs, len(tt.want), tt.want)
					}
					for _, w := range tt.want {
						if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, w) }) {
							t.Errorf("no error starts %q: %q", w, errs)
						}
					}
				})
			}
		}
	}
}
