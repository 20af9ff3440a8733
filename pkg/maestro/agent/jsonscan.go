package agent

// What the agent reads of JSON without decoding it: the members of an object, found by their brackets and
// quotes. The JSON is checked where it is decoded (a watch event's object) or was checked already (a
// manifest); these only find where values begin and end.

// forEachJSONMember calls member with the key and the value of each member of the object data holds, in
// order, and says whether data is such an object and every call returned true. Keys are taken only as
// printable ASCII without escapes, which read the same decoded; any other key returns false. An empty
// object returns false too.
func forEachJSONMember(data []byte, member func(key, value []byte) bool) bool {
	i := skipJSONSpace(data, 0)
	if i == len(data) || data[i] != '{' {
		return false
	}
	for i++; ; {
		i = skipJSONSpace(data, i)
		key, next, ok := plainJSONString(data, i)
		if !ok {
			return false
		}
		i = skipJSONSpace(data, next)
		if i == len(data) || data[i] != ':' {
			return false
		}
		i = skipJSONSpace(data, i+1)
		end, ok := jsonValueEnd(data, i)
		if !ok || !member(key, data[i:end]) {
			return false
		}
		i = skipJSONSpace(data, end)
		if i == len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i++
		case '}':
			return skipJSONSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// appendJSONMember appends a member to dst, an object begun with its opening bracket, after a comma
// unless it is the first; key is a key forEachJSONMember read, which needs no escaping.
func appendJSONMember(dst, key, value []byte) []byte {
	if len(dst) > 1 {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return append(dst, value...)
}

// plainJSONString returns the content of the string at data[i] and the index after it, if it is a string
// of printable ASCII without escapes, which reads the same decoded.
func plainJSONString(data []byte, i int) (content []byte, next int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return data[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// jsonValueEnd returns the index after the value at data[i]: an object or an array found by its brackets,
// a string by its closing quote, anything else by the delimiter after it.
func jsonValueEnd(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '{', '[':
		f := watchFrameReader{buf: data, start: i, frameStart: -1}
		end, err := f.scan()
		return end, err == nil && end > 0
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++
			case '"':
				return j + 1, true
			}
		}
		return 0, false
	}
	j := i
	for j < len(data) && !isJSONDelimiter(data[j]) {
		j++
	}
	return j, j > i
}

func isJSONDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ':', ' ', '\n', '\r', '\t':
		return true
	}
	return false
}

// skipJSONSpace returns the index of the first byte at or after i that is not JSON whitespace.
func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') {
		i++
	}
	return i
}
