package dashboard

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/webui"
)

// creditNoteForm is what the credit note form was sent with.
type creditNoteForm struct {
	Amount, Kind, Reason, Description string
	Minor                             string // the amount in minor units, once read
}

type option struct{ Value, Label string }

var (
	creditNoteKinds = []option{{"credit", "credit to the customer's balance"}, {"refund", "refund (money back to the payment method)"},
		{"offset", "offset (less to pay on an open invoice)"}}
	creditNoteReasons = []string{"order_change", "order_cancellation", "product_unsatisfactory", "duplicated_charge", "fraudulent_charge", "other"}
)

// creditNotePage shows the credit note form of an invoice (admins).
func (s *Server) creditNotePage(w http.ResponseWriter, r *http.Request) {
	p, ok := s.loadInvoice(w, r)
	if !ok || !s.admin(w, r, p) {
		return
	}
	p.Key, p.Form = webui.NewToken(), creditNoteForm{Kind: "credit", Reason: "order_change"}
	if p.Invoice.Status == remit.InvoiceOpen {
		p.Form.Kind = "offset"
	}
	s.renderCreditNote(w, r, http.StatusOK, p)
}

func (s *Server) renderCreditNote(w http.ResponseWriter, r *http.Request, status int, p page) {
	p.Kinds, p.Reasons = creditNoteKinds, creditNoteReasons
	s.render(w, r, status, "credit-note", p)
}

// issueCreditNote reads the form (the amount in the invoice's currency) and issues the credit note
// through the engine; every problem is shown next to its field, in the engine's words.
func (s *Server) issueCreditNote(w http.ResponseWriter, r *http.Request) {
	p, ok := s.adminPost(w, r, (*Server).loadInvoice)
	if !ok {
		return
	}
	f := creditNoteForm{Amount: strings.TrimSpace(r.PostFormValue("amount")), Kind: r.PostFormValue("kind"),
		Reason: r.PostFormValue("reason"), Description: strings.TrimSpace(r.PostFormValue("description"))}
	p.Form, p.Key = f, r.PostFormValue("key")
	var probs remit.Problems
	amount := remit.ParseMajorAmount(f.Amount, p.Invoice.Currency, "amount", &probs)
	remit.CheckText(&probs, "description", f.Description, true) // the API's text rule (docs/security.md)
	if err := probs.Err(); err != nil {
		p.Errors = remit.FieldMessages(err)
		p.Form.Description = remit.CleanText(f.Description) // shown again without what it may not hold
		s.renderCreditNote(w, r, http.StatusUnprocessableEntity, p)
		return
	}
	p.Form.Minor = strconv.FormatInt(amount, 10)
	cn, err := s.eng.IssueCreditNote(r.Context(), *p.Operator, p.Account.ID, p.Invoice.InvoiceID, f.Kind, amount, f.Reason, f.Description, p.Key)
	if fields := remit.FieldMessages(err); fields != nil {
		p.Errors = formFields(fields)
		p.Error = fields["key"] // not a field of the form: said above it
		p.Key = webui.NewToken()
		s.renderCreditNote(w, r, http.StatusUnprocessableEntity, p)
		return
	}
	switch c := remit.ErrorCode(err); {
	case err == nil:
		http.Redirect(w, r, invoicePath(p.Account.ID, p.Invoice.InvoiceID)+"?credited="+cn.Number, http.StatusSeeOther)
	case c == remit.EConflict || c == remit.ENotFound || c == remit.EForbidden:
		p.Error, p.Key = remit.ErrorMessage(err), webui.NewToken()
		s.renderCreditNote(w, r, statusOf(c), p)
	default:
		s.fail(w, r, err)
	}
}

// formFields maps the engine's field names to the form's: the three amounts are the form's one.
func formFields(fields map[string]string) map[string]string {
	out := map[string]string{}
	for f, msg := range fields {
		switch f {
		case "lines[0].bucket":
			f = "kind"
		case "lines[0].description":
			f = "description"
		case "creditAmount", "refundAmount", "offsetAmount", "lines", "lines[0].amount":
			f = "amount"
		}
		if _, taken := out[f]; !taken {
			out[f] = msg
		}
	}
	return out
}
