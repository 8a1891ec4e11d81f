package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Operators: the people who sign in to the dashboard (docs/dashboard.md). An operator is created
// by the CLI (`remit user create`), which prints a one-time link; the operator sets a password
// through it (bcrypt), then signs in with e-mail and password. Their sessions are kept in the store
// (OperatorSessions), so they hold across `serve` processes.

// Operators is the dashboard's accounts and sign-in.
type Operators struct {
	*core
	invoicing   *Invoicing
	clocks      *TestClocks
	webhooks    *Webhooks
	payments    *Payments
	quotes      *Quotes
	creditNotes *CreditNotes
	emails      *Emails
	documents   *Documents
	merchants   *Merchants
	ledger      *Ledger
	usage       *Usage
	jobs        *Jobs

	dummyOnce sync.Once
	dummy     []byte
}

// hashCost is bcrypt's cost for operator passwords: Config.OperatorHashCost, by default
// bcrypt.DefaultCost (about 50 to 100 ms on this project's reference machine: slow for guessing,
// quick for one sign-in).
func (op *Operators) hashCost() int {
	if op.Config.OperatorHashCost > 0 {
		return op.Config.OperatorHashCost
	}
	return bcrypt.DefaultCost
}

// dummyHash is compared when no operator matches, so that a sign-in takes as long for an unknown
// address as for a known one (made once, at the configured cost).
func (op *Operators) dummyHash() []byte {
	op.dummyOnce.Do(func() {
		op.dummy, _ = bcrypt.GenerateFromPassword([]byte("no such operator, no such password"), op.hashCost())
	})
	return op.dummy
}

var errSignIn = remit.Errorf(remit.EUnauthorized, "The e-mail address or the password is wrong, or this account cannot sign in.")

// CreateOperator adds an operator to an organization and returns the one-time link that sets its
// password (valid remit.OperatorLinkTTL).
//
// Errors: validation_failure (email, role), not_found (organization), conflict (email taken).
func (op *Operators) CreateOperator(ctx context.Context, organizationID, email string, role remit.OperatorRole) (remit.Operator, string, error) {
	var p remit.Problems
	email = remit.NormalizeOperatorEmail(email, &p)
	if !role.Valid() {
		p.Body("role", "invalid_enum", "role must be admin or viewer.")
	}
	if err := p.Err(); err != nil {
		return remit.Operator{}, "", err
	}
	now := micro(op.Clock.Now())
	o := remit.Operator{ID: remit.NewID("op"), OrganizationID: organizationID, Email: email, Role: role, CreatedAt: now}
	var link string
	err := op.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := duplicateAs(tx.CreateOperator(ctx, o), "dashboard user", "email", email); err != nil {
			return err
		}
		token := NewSecret()
		link = op.Config.PublicURL + "/dashboard/set-password?token=" + token
		return tx.CreateOperatorLink(ctx, HashSecret(token), o.ID, now.Add(remit.OperatorLinkTTL))
	})
	return o, link, err
}

// ListOperators lists an organization's operators, oldest first.
func (op *Operators) ListOperators(ctx context.Context, organizationID string) ([]remit.Operator, error) {
	return op.DB.Read(ctx).ListOperators(ctx, organizationID)
}

// DisableOperator disables the operator with the e-mail address: it cannot sign in any more, and
// its sessions end at their next request.
//
// Errors: not_found.
func (op *Operators) DisableOperator(ctx context.Context, email string) (remit.Operator, error) {
	var p remit.Problems
	email = remit.NormalizeOperatorEmail(email, &p)
	if err := p.Err(); err != nil {
		return remit.Operator{}, err
	}
	var o remit.Operator
	err := op.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		if o, err = tx.GetOperatorByEmail(ctx, email); err != nil {
			return err
		}
		now := micro(op.Clock.Now())
		o.DisabledAt = &now
		return tx.DisableOperator(ctx, o.ID, now)
	})
	return o, err
}

// OperatorForLink returns the operator a set-password link is for.
//
// Errors: not_found (unknown, used or expired: the same answer for each).
func (op *Operators) OperatorForLink(ctx context.Context, token string) (remit.Operator, error) {
	id, ok, err := op.DB.Read(ctx).OperatorLink(ctx, HashSecret(token), op.Clock.Now())
	if err != nil {
		return remit.Operator{}, err
	}
	if !ok {
		return remit.Operator{}, errLinkGone
	}
	return op.DB.Read(ctx).GetOperator(ctx, id)
}

var errLinkGone = remit.Errorf(remit.ENotFound, "This link is unknown, was used already, or has expired. Ask an administrator for a new one (remit user create prints it).").With("resource", "link")

// SetOperatorPassword sets the password of the operator a one-time link is for, and uses the link.
// The password follows remit.CheckOperatorPassword, which needs the operator's e-mail address: the
// link is read first.
//
// Errors: not_found (the link: unknown, used or expired), validation_failure (password, confirm).
func (op *Operators) SetOperatorPassword(ctx context.Context, token, password, confirm string) (remit.Operator, error) {
	who, err := op.OperatorForLink(ctx, token)
	if err != nil {
		return remit.Operator{}, err
	}
	var p remit.Problems
	remit.CheckOperatorPassword(password, confirm, who.Email, &p)
	if err := p.Err(); err != nil {
		return remit.Operator{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), op.hashCost())
	if err != nil {
		return remit.Operator{}, err
	}
	var o remit.Operator
	err = op.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		now := micro(op.Clock.Now())
		id, ok, err := tx.UseOperatorLink(ctx, HashSecret(token), now)
		if err != nil {
			return err
		}
		if !ok {
			return errLinkGone
		}
		if err := tx.SetOperatorPassword(ctx, id, string(hash), now); err != nil {
			return err
		}
		o, err = tx.GetOperator(ctx, id)
		return err
	})
	return o, err
}

// SignIn checks an e-mail address and password. Every failure is the same unauthorized answer,
// and takes as long (an unknown address is compared with a dummy hash).
//
// Errors: unauthorized.
func (op *Operators) SignIn(ctx context.Context, email, password string) (remit.Operator, error) {
	var p remit.Problems
	email = remit.NormalizeOperatorEmail(email, &p)
	o, err := op.DB.Read(ctx).GetOperatorByEmail(ctx, email)
	if err != nil && remit.ErrorCode(err) != remit.ENotFound {
		return remit.Operator{}, err
	}
	hash := []byte(o.PasswordHash)
	if err != nil || len(hash) == 0 {
		hash = op.dummyHash()
	}
	match := bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
	if err != nil || !match || !o.Active() {
		return remit.Operator{}, errSignIn
	}
	return o, nil
}

// Operator returns an operator by ID (a session's operator, read on every request).
//
// Errors: not_found.
func (op *Operators) Operator(ctx context.Context, id string) (remit.Operator, error) {
	return op.DB.Read(ctx).GetOperator(ctx, id)
}

// Organization returns an organization and its merchant accounts in env, newest first.
func (op *Operators) Organization(ctx context.Context, organizationID string, env remit.Environment) (remit.Organization, []remit.MerchantAccount, error) {
	q := op.DB.Read(ctx)
	org, err := q.GetOrganization(ctx, organizationID)
	if err != nil {
		return org, nil, err
	}
	accounts, err := q.ListOrganizationMerchantAccounts(ctx, organizationID, env)
	return org, accounts, err
}

// OperatorSessions keeps dashboard sessions in the store, keyed by the SHA-256 of the session's
// token. It has the methods of github.com/alexedwards/scs/v2's Store.
type OperatorSessions struct{ *core }

// Sessions returns the store of dashboard sessions.
func (op *Operators) Sessions() OperatorSessions { return OperatorSessions{op.core} }

// Find returns a session's data, unless it is missing or expired.
func (s OperatorSessions) Find(token string) ([]byte, bool, error) {
	ctx := context.Background()
	return s.DB.Read(ctx).FindOperatorSession(ctx, HashSecret(token), s.Clock.Now())
}

// Commit writes a session.
func (s OperatorSessions) Commit(token string, b []byte, expiry time.Time) error {
	ctx := context.Background()
	return s.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		return tx.SaveOperatorSession(ctx, HashSecret(token), b, expiry)
	})
}

// Delete removes a session (and every expired one).
func (s OperatorSessions) Delete(token string) error {
	ctx := context.Background()
	return s.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		return tx.DeleteOperatorSession(ctx, HashSecret(token), s.Clock.Now())
	})
}

// IsSignInFailure reports whether err is SignIn's refusal.
func IsSignInFailure(err error) bool { return errors.Is(err, errSignIn) }
