package dashboard

import (
	"net/http"
)

// Underwriting: an admin decides a merchant account in review (production accounts go through
// it), with the decisions of `remit merchant decide`.

type decision struct {
	Slug, Label, Explain, Button string
}

var decisions = []decision{
	{"approve", "Approve…", "The account is approved: it may take payments and is paid out. The event merchant_account.approved is sent.", "Approve the account"},
	{"request-update", "Ask for an update…", "The account goes back to its owner for changes (status update_requested) and may be submitted again. The event merchant_account.update_requested is sent.", "Ask for an update"},
	{"reject", "Reject…", "The account is rejected: it cannot take payments. The event merchant_account.rejected is sent. It cannot be undone.", "Reject the account"},
}

func findDecision(slug string) (decision, bool) {
	return bySlug(decisions, slug, func(d decision) string { return d.Slug })
}

// decisionConfirmation is the confirmation page of a decision; the CLI command does the same.
func decisionConfirmation(d decision, p page) confirmation {
	base := accountPath(p.Account)
	return confirmation{Title: d.Button + " " + p.Account.DisplayName + "?", Explain: d.Explain, Back: base, BackLabel: "Back to the account",
		Command: "remit merchant decide " + p.Account.ID + " " + d.Slug, Post: base + "/decide/" + d.Slug, Button: d.Button}
}

// loadAccount reads the account the path names, for a decision page (false: answered).
func (s *Server) loadAccount(w http.ResponseWriter, r *http.Request) (page, decision, bool) {
	d, ok := findDecision(r.PathValue("decision"))
	if !ok {
		s.notFound(w, r)
		return page{}, d, false
	}
	v, err := s.eng.AccountOverview(r.Context(), operatorOf(r), r.PathValue("account"))
	if s.answered(w, r, err) {
		return page{}, d, false
	}
	p := s.accountBase(r, v.Account, v.Account.DisplayName)
	return p, d, s.admin(w, r, p)
}

// decisionPage asks an admin to confirm a decision.
func (s *Server) decisionPage(w http.ResponseWriter, r *http.Request) {
	p, d, ok := s.loadAccount(w, r)
	if !ok {
		return
	}
	s.confirm(w, r, p, func(p page) confirmation { return decisionConfirmation(d, p) })
}

// decide records the decision through the engine, under the form's Idempotency-Key.
func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	if !s.checkCSRF(w, r) {
		return
	}
	p, d, ok := s.loadAccount(w, r)
	if !ok {
		return
	}
	_, err := s.eng.DecideMerchant(r.Context(), *p.Operator, p.Account.ID, d.Slug, r.PostFormValue("key"))
	s.finish(w, r, p, err, accountPath(p.Account)+"?decided="+d.Slug, func(p page) confirmation { return decisionConfirmation(d, p) })
}
