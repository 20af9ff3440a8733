package validation

import (
	"unicode"

	"github.com/google/uuid"
)

// The checks below are what the regular expressions in match_test.go accept, written out: a create
// checks a cluster's name, region, resource group, subscription, version and DNS prefix, and running
// those expressions took 1.3 % of the server's CPU in a round of 100,000 creates and gets, and 45 % of
// validating a cluster (BenchmarkValidateHCPCluster: 18.5 us with them, 10.6 without).

// IsUUID accepts the 36-character form of a UUID only, as Azure and HyperShift write them, not the braced
// or URN forms uuid.Parse also takes.
func IsUUID(value string) bool {
	_, err := uuid.Parse(value)
	return err == nil && len(value) == 36
}

// isLowercaseName accepts lowercase letters, digits and '-', starting with a letter and ending with a
// letter or digit.
func isLowercaseName(value string) bool {
	if value == "" || !isLowercaseLetter(value[0]) || value[len(value)-1] == '-' {
		return false
	}
	for i := 1; i < len(value); i++ {
		if c := value[i]; !isLowercaseLetter(c) && !isDigit(c) && c != '-' {
			return false
		}
	}
	return true
}

// isLowercaseAlphanumeric accepts one or more lowercase letters and digits.
func isLowercaseAlphanumeric(value string) bool {
	if value == "" {
		return false
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; !isLowercaseLetter(c) && !isDigit(c) {
			return false
		}
	}
	return true
}

// isResourceGroupName accepts one or more Unicode letters and digits, '-', '_', '.', '(' and ')'.
func isResourceGroupName(value string) bool {
	if value == "" {
		return false
	}
	for _, r := range value { // a byte that is not UTF-8 is utf8.RuneError, not a letter
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '-' && r != '_' && r != '.' && r != '(' && r != ')' {
			return false
		}
	}
	return true
}

// isMajorMinor accepts MAJOR.MINOR, two decimal numbers without leading zeros.
func isMajorMinor(value string) bool {
	for i := 0; i < len(value); i++ {
		if value[i] == '.' {
			return isNumber(value[:i]) && isNumber(value[i+1:])
		}
	}
	return false
}

// isNumber accepts a decimal number without leading zeros.
func isNumber(value string) bool {
	if value == "" || (value[0] == '0' && len(value) > 1) {
		return false
	}
	for i := 0; i < len(value); i++ {
		if !isDigit(value[i]) {
			return false
		}
	}
	return true
}

func isLowercaseLetter(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool           { return '0' <= c && c <= '9' }
