package httpapi

import (
	"context"
	"mime"
	"net/http"

	"github.com/remit-billing/remit/document"
)

// getInvoicePdf handles GET /v1/invoices/{invoiceId}/pdf.
func (s *Server) getInvoicePdf(ctx context.Context, r *Request) (any, error) {
	d, err := s.eng.Documents.InvoiceDocument(ctx, r.Merchant, r.Path("invoiceId"))
	if err != nil {
		return nil, err
	}
	return pdfAnswer(document.InvoicePDF(d))(document.InvoiceFileName(d))
}

// getCreditNotePdf handles GET /v1/credit-notes/{creditNoteId}/pdf.
func (s *Server) getCreditNotePdf(ctx context.Context, r *Request) (any, error) {
	d, err := s.eng.Documents.CreditNoteDocument(ctx, r.Merchant, r.Path("creditNoteId"))
	if err != nil {
		return nil, err
	}
	return pdfAnswer(document.CreditNotePDF(d))(d.CreditNote.Number + ".pdf")
}

// getPaymentReceiptPdf handles GET /v1/payment-receipts/{receiptId}/pdf.
func (s *Server) getPaymentReceiptPdf(ctx context.Context, r *Request) (any, error) {
	d, err := s.eng.Documents.ReceiptDocument(ctx, r.Merchant, r.Path("receiptId"))
	if err != nil {
		return nil, err
	}
	return pdfAnswer(document.ReceiptPDF(d))(d.Receipt.ReceiptNumber + ".pdf")
}

// pdfAnswer turns a rendered PDF into the operation's answer, shown inline under fileName.
func pdfAnswer(body []byte, err error) func(fileName string) (any, error) {
	return func(fileName string) (any, error) {
		if err != nil {
			return nil, err
		}
		h := http.Header{}
		h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": fileName}))
		h.Set("Cache-Control", "no-store")
		return Binary{ContentType: "application/pdf", Body: body, Header: h}, nil
	}
}
