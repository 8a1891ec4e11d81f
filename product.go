package remit

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Products and features (docs/entitlements.md): a product is what prices sell; it grants features,
// each boolean (access or not), metered (a meter's usage per subscription period against a limit)
// or static (a value). Entitlements (entitlement.go) follow from them.

// Feature types.
const (
	FeatureBoolean = "boolean"
	FeatureMetered = "metered"
	FeatureStatic  = "static"
)

// FeatureTypes lists the feature types.
var FeatureTypes = []string{FeatureBoolean, FeatureMetered, FeatureStatic}

// Product is a catalog product with the features it grants (by featureKey).
type Product struct {
	Object            string            `json:"object"` // "product"
	ProductID         string            `json:"productId"`
	Name              string            `json:"name"`
	Description       *string           `json:"description"`
	Active            bool              `json:"active"`
	Features          []ProductFeature  `json:"features"`
	Metadata          map[string]string `json:"metadata"`
	Environment       Environment       `json:"environment"`
	MerchantAccountID string            `json:"merchantAccountId"`
	CreatedAt         time.Time         `json:"createdAt"`
}

// ProductFeature is a feature a product grants: Limit and SoftLimit for a metered one (Limit nil:
// unlimited), Value for a static one.
type ProductFeature struct {
	FeatureKey string  `json:"featureKey"`
	Type       string  `json:"type"`
	Limit      *int64  `json:"limit"`
	SoftLimit  bool    `json:"softLimit"`
	Value      *string `json:"value"`
	MeterID    string  `json:"-"` // metered: the feature's meter
}

// ProductFeatureInput is the body of POST /v1/products/{id}/features.
type ProductFeatureInput struct {
	FeatureKey string
	Limit      *int64
	SoftLimit  *bool
	Value      *string
}

// Feature is a feature products may grant; MeterID is set for a metered one only.
type Feature struct {
	Object            string      `json:"object"` // "feature"
	FeatureKey        string      `json:"featureKey"`
	Name              string      `json:"name"`
	Type              string      `json:"type"`
	MeterID           *string     `json:"meterId"`
	Environment       Environment `json:"environment"`
	MerchantAccountID string      `json:"merchantAccountId"`
	CreatedAt         time.Time   `json:"createdAt"`
}

// ProductQuery is the query of GET /v1/products.
type ProductQuery struct {
	ListQuery
	Active string
}

// CheckProduct records the problems of a product about to be created (the metadata rule; the
// schema bounds the name and the ID).
func CheckProduct(p *Product, probs *Problems) {
	if strings.TrimSpace(p.Name) == "" {
		probs.Body("name", "required", "name must not be blank.")
	}
	MetadataProblems(probs, "metadata", p.Metadata)
}

// CheckFeature records the problems of a feature about to be created: meterId with, and only
// with, a metered feature.
func CheckFeature(f Feature, probs *Problems) {
	switch {
	case f.Type == FeatureMetered && f.MeterID == nil:
		probs.Body("meterId", "required", "meterId is required for a metered feature: the meter whose usage it counts.")
	case f.Type != FeatureMetered && f.MeterID != nil:
		probs.Body("meterId", "not_allowed", fmt.Sprintf("meterId is allowed only for a metered feature, not a %s one.", f.Type))
	}
	if strings.TrimSpace(f.Name) == "" {
		probs.Body("name", "required", "name must not be blank.")
	}
}

// GrantOf checks a product feature's body against the feature it names and returns what the
// product grants: limit and softLimit only for a metered feature, value for (and required by) a
// static one, neither for a boolean one. Every problem is recorded in probs.
func GrantOf(f Feature, in ProductFeatureInput, probs *Problems) ProductFeature {
	g := ProductFeature{FeatureKey: f.FeatureKey, Type: f.Type}
	forbid := func(field string, present bool) {
		if present {
			probs.Body(field, "not_allowed", fmt.Sprintf("%s is not allowed for feature '%s', a %s feature.", field, f.FeatureKey, f.Type))
		}
	}
	if f.Type == FeatureMetered {
		if f.MeterID != nil {
			g.MeterID = *f.MeterID
		}
		g.Limit = in.Limit
		g.SoftLimit = in.SoftLimit != nil && *in.SoftLimit
	} else {
		forbid("limit", in.Limit != nil)
		forbid("softLimit", in.SoftLimit != nil)
	}
	switch {
	case f.Type == FeatureStatic && in.Value == nil:
		probs.Body("value", "required", fmt.Sprintf("value is required for feature '%s', a static feature.", f.FeatureKey))
	case f.Type == FeatureStatic:
		g.Value = in.Value
	default:
		forbid("value", in.Value != nil)
	}
	return g
}

// WithFeature returns features with g in place of the grant of the same key (or added), sorted by
// key.
func WithFeature(features []ProductFeature, g ProductFeature) []ProductFeature {
	out := WithoutFeature(features, g.FeatureKey)
	out = append(out, g)
	slices.SortFunc(out, func(a, b ProductFeature) int { return strings.Compare(a.FeatureKey, b.FeatureKey) })
	return out
}

// WithoutFeature returns features without the grant of key.
func WithoutFeature(features []ProductFeature, key string) []ProductFeature {
	out := make([]ProductFeature, 0, len(features)+1)
	for _, g := range features {
		if g.FeatureKey != key {
			out = append(out, g)
		}
	}
	return out
}

// ProductPatch updates a product: name, description (null clears it), active (false archives it:
// it leaves the active list; prices naming it and the features it grants keep working), metadata.
// Its features change through their own routes.
var ProductPatch = NewPatchRule("product", Product{},
	Field("name", false, func(p *Product) *string { return &p.Name }, func(p *Product, probs *Problems) {
		if strings.TrimSpace(p.Name) == "" {
			probs.Body("name", "required", "name must not be blank.")
		}
	}),
	Field("description", true, func(p *Product) **string { return &p.Description }, nil),
	Field("active", false, func(p *Product) *bool { return &p.Active }, nil),
	MetadataField(func(p *Product) *map[string]string { return &p.Metadata }),
)
