package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// listProducts handles GET /v1/products.
func (s *Server) listProducts(ctx context.Context, r *Request) (any, error) {
	return s.eng.Catalog.ListProducts(ctx, r.Merchant, remit.ProductQuery{Active: r.Query("active"), ListQuery: remit.ListQueryOf(r.Query)})
}

// attachProductFeature handles POST /v1/products/{productId}/features.
func (s *Server) attachProductFeature(ctx context.Context, r *Request, body api.ProductFeatureRequest) (any, error) {
	return s.eng.Catalog.AttachProductFeature(ctx, r.Merchant, r.Path("productId"), remit.ProductFeatureInput{
		FeatureKey: body.FeatureKey, Limit: body.Limit, SoftLimit: body.SoftLimit, Value: body.Value})
}

// detachProductFeature handles DELETE /v1/products/{productId}/features/{featureKey}.
func (s *Server) detachProductFeature(ctx context.Context, r *Request) (any, error) {
	return s.eng.Catalog.DetachProductFeature(ctx, r.Merchant, r.Path("productId"), r.Path("featureKey"))
}

// listFeatures handles GET /v1/features.
func (s *Server) listFeatures(ctx context.Context, r *Request) (any, error) {
	return s.eng.Catalog.ListFeatures(ctx, r.Merchant, remit.ListQueryOf(r.Query))
}

// getCustomerEntitlement handles GET /v1/customers/{customerId}/entitlements/{featureKey}.
func (s *Server) getCustomerEntitlement(ctx context.Context, r *Request) (any, error) {
	return s.eng.Catalog.GetCustomerEntitlement(ctx, r.Merchant, r.Path("customerId"), r.Path("featureKey"))
}

func productInput(body api.ProductCreateRequest) remit.Product {
	p := remit.Product{Name: body.Name, Description: body.Description, Metadata: metadata(body.Metadata)}
	if body.ProductId != nil {
		p.ProductID = *body.ProductId
	}
	return p
}

func featureInput(body api.FeatureCreateRequest) remit.Feature {
	return remit.Feature{FeatureKey: body.FeatureKey, Name: body.Name, Type: string(body.Type), MeterID: body.MeterId}
}
