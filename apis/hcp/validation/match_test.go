package validation

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// Each check accepts exactly what its regular expression, the rule as written first, accepts: on the
// strings that sit at the rules' edges, and on strings made at random of the characters that matter.
func TestChecksAcceptWhatTheirExpressionsAccept(t *testing.T) {
	checks := []struct {
		expression string
		check      func(string) bool
	}{
		{`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`, IsUUID},
		{`^[a-z]([-a-z0-9]*[a-z0-9])?$`, isLowercaseName},
		{`^[a-z0-9]+$`, isLowercaseAlphanumeric},
		{`^[-\p{L}\p{N}_.()]+$`, isResourceGroupName},
		{`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`, isMajorMinor},
	}
	edges := []string{
		"", "a", "A", "0", "-", ".", "a-", "-a", "a-b", "a--b", "a0", "0a", "eastus", "westeurope2", "East",
		"00000000-0000-0000-0000-000000000000", "0123ABCD-ef01-4567-89ab-CDEF01234567", "{00000000-0000-0000-0000-000000000000}",
		"urn:uuid:00000000-0000-0000-0000-000000000000", "00000000000000000000000000000000", "00000000-0000-0000-0000-00000000000g",
		"00000000-0000-0000-0000_000000000000", "00000000-0000-0000-0000-0000000000000",
		"rg", "my_rg.(1)", "rg.", "groupé", "grupo٣", "rg\xff", "rg\u00a0", "rg ", "日本",
		"4.20", "4.2", "04.20", "4.020", "0.0", "4.", ".4", "4", "4.20.1", "10.0", "١.٢",
	}
	const alphabet = "abzAZ09-_.()é٣日\xff \x00{}:"
	runes := []rune(alphabet)
	random := rand.New(rand.NewPCG(1, 2))
	var generated []string
	for range 200_000 {
		var b strings.Builder
		for range random.IntN(40) {
			if random.IntN(8) == 0 {
				b.WriteByte("0123456789abcdef-"[random.IntN(17)]) // UUIDs and versions need long runs of these
				continue
			}
			b.WriteRune(runes[random.IntN(len(runes))])
		}
		generated = append(generated, b.String())
	}
	for i := range 20_000 { // near misses of UUIDs and versions
		id := []byte("0123abcd-ef01-4567-89ab-cdef01234567")
		id[random.IntN(len(id))] = alphabet[random.IntN(len(alphabet))]
		generated = append(generated, string(id), strings.Repeat("1", i%3)+"."+strings.Repeat("0", i%4))
	}
	for _, c := range checks {
		expression := regexp.MustCompile(c.expression)
		for _, value := range append(edges, generated...) {
			if got, want := c.check(value), expression.MatchString(value); got != want {
				t.Errorf("%s: %q accepted %v, the expression %v", c.expression, value, got, want)
			}
		}
	}
}
