package remit

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// Metadata limits (product.md "Errors"): at most 50 keys, keys of 1 to 40 characters, string values of
// at most 500 characters. The contract checks the number of keys and the values; the key length
// cannot be expressed in it and is checked here.
const (
	MetadataMaxKeys     = 50
	MetadataMaxKeyLen   = 40
	MetadataMaxValueLen = 500
)

// MetadataProblems records a problem for each metadata key that is empty or too long. field is the
// path of the metadata object ("metadata").
func MetadataProblems(p *Problems, field string, md map[string]string) {
	if len(md) > MetadataMaxKeys {
		p.Body(field, "too_many_keys", fmt.Sprintf("%s may have at most %d keys.", field, MetadataMaxKeys))
	}
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := md[k]
		if n := utf8.RuneCountInString(k); n == 0 || n > MetadataMaxKeyLen {
			p.Body(field+"."+k, "invalid_length", fmt.Sprintf("Metadata keys are 1 to %d characters.", MetadataMaxKeyLen))
		}
		if utf8.RuneCountInString(v) > MetadataMaxValueLen {
			p.Body(field+"."+k, "invalid_length", fmt.Sprintf("Metadata values are at most %d characters.", MetadataMaxValueLen))
		}
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
