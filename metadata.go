package remit

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// Metadata limits (docs/api-conventions.md "Metadata"): at most 50 keys, keys of 1 to 40 characters, string values of
// at most 500 characters. The contract checks the number of keys and the values; the key length
// cannot be expressed in it and is checked here.
const (
	MetadataMaxKeys     = 50
	MetadataMaxKeyLen   = 40
	MetadataMaxValueLen = 500
)

// MetadataProblems is the one metadata rule beyond the contract's shape. It records, for the
// metadata object at field ("metadata", "lines[0].metadata"): too many keys (too_many_keys); keys
// that are empty or longer than 40 characters, once for the object (invalid_key, naming the first
// such key, shortened); values longer than 500 characters, per key (invalid_length). The HTTP edge
// runs it on every metadata object of a body, and the engine may run it again: both report alike.
func MetadataProblems(p *Problems, field string, md map[string]string) {
	if len(md) > MetadataMaxKeys {
		p.Body(field, "too_many_keys", fmt.Sprintf("%s may have at most %d keys.", field, MetadataMaxKeys))
	}
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var bad []string
	for _, k := range keys {
		n := utf8.RuneCountInString(k)
		if n == 0 || n > MetadataMaxKeyLen {
			bad = append(bad, k)
			continue
		}
		if utf8.RuneCountInString(md[k]) > MetadataMaxValueLen {
			p.Body(field+"."+k, "invalid_length", fmt.Sprintf("Metadata values are at most %d characters.", MetadataMaxValueLen))
		}
	}
	if len(bad) > 0 {
		first := []rune(bad[0])
		if len(first) > MetadataMaxKeyLen {
			first = append(first[:MetadataMaxKeyLen], '…')
		}
		p.Body(field, "invalid_key", fmt.Sprintf("%s keys are 1 to %d characters; %d key(s) are not, such as %q.", field, MetadataMaxKeyLen, len(bad), string(first)))
	}
}

// CopyMetadata returns md, or an empty map for nil, so that metadata is always a JSON object.
func CopyMetadata(md map[string]string) map[string]string {
	out := make(map[string]string, len(md))
	for k, v := range md {
		out[k] = v
	}
	return out
}
