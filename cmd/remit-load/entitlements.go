package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/remit-billing/remit"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The entitlement check (docs/entitlements.md): GET /v1/customers/{id}/entitlements/{featureKey}
// for customers subscribed to the seed's basic plan, whose product grants a boolean and a metered
// feature. The probe sets it up through the API: two features, the grants on prod_load, and a
// subscription (an accepted quote) for each of the first entitledCustomers customers.

const entitledCustomers = 50

var entitledFeatures = []string{"load_sso", "load_calls"}

// entitlementScenario is scenario (l).
func entitlementScenario(base, scope string, fx *Fixture, write func() http.Header) scenario {
	readHeader := http.Header{"Authorization": {"Bearer " + fx.APIKey}}
	n := min(entitledCustomers, len(fx.Customers))
	var i uint64
	return scenario{letter: "l", name: "entitlement-check", request: "GET /v1/customers/{id}/entitlements/{featureKey}",
		target: func(t *vegeta.Target) error {
			i++
			t.Method, t.Header = http.MethodGet, readHeader
			t.URL = base + "/v1/customers/" + fx.Customers[int(i/2)%n] + "/entitlements/" + entitledFeatures[i%2] + "?" + scope
			return nil
		},
		probe: func() string { return setUpEntitlements(base, scope, fx, n, write) },
	}
}

// setUpEntitlements creates the features, the grants and the subscriptions; "" when done.
func setUpEntitlements(base, scope string, fx *Fixture, n int, write func() http.Header) string {
	call := func(method, path, body string) (map[string]any, error) {
		req, _ := http.NewRequest(method, base+path+"?"+scope, strings.NewReader(body))
		req.Header = write()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 && res.StatusCode != http.StatusConflict {
			return nil, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
		var out struct {
			Data map[string]any `json:"data"`
		}
		_ = json.Unmarshal(b, &out)
		return out.Data, nil
	}
	steps := [][3]string{
		{http.MethodPost, "/v1/features", `{"featureKey":"load_sso","name":"SSO","type":"boolean"}`},
		{http.MethodPost, "/v1/features", `{"featureKey":"load_calls","name":"API calls","type":"metered","meterId":"` + meterID + `"}`},
		{http.MethodPost, "/v1/products/prod_load/features", `{"featureKey":"load_sso"}`},
		{http.MethodPost, "/v1/products/prod_load/features", `{"featureKey":"load_calls","limit":1000000000}`},
	}
	for _, s := range steps {
		if _, err := call(s[0], s[1], s[2]); err != nil {
			return "setting up entitlements: " + err.Error()
		}
	}
	for _, c := range fx.Customers[:n] {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/billing-accounts?"+scope+"&customerId="+url.QueryEscape(c), nil)
		req.Header = http.Header{"Authorization": {"Bearer " + fx.APIKey}}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return "billing accounts: " + err.Error()
		}
		var list struct {
			Data remit.List[map[string]any] `json:"data"`
		}
		err = json.NewDecoder(res.Body).Decode(&list)
		_ = res.Body.Close()
		if err != nil || len(list.Data.Items) == 0 {
			return fmt.Sprintf("no billing account for customer %s", c)
		}
		q, err := call(http.MethodPost, "/v1/quotes", `{"orderType":"subscription_creation","customerId":"`+c+`","billingAccountId":"`+
			fmt.Sprint(list.Data.Items[0]["billingAccountId"])+`","currency":"USD","lines":[{"priceId":"`+priceBasic+`"}]}`)
		if err != nil {
			return "quote: " + err.Error()
		}
		if _, err := call(http.MethodPost, "/v1/quotes/"+fmt.Sprint(q["quoteId"])+"/accept", `{}`); err != nil {
			return "accept: " + err.Error()
		}
	}
	return ""
}
