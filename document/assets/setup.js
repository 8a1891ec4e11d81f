// Hosted setup page: saves a card for the session's customer. In the sandbox the customer picks a
// test card; in production the card is typed into the processor's own element (Stripe.js, loaded
// from js.stripe.com), confirmed with the processor, and only the saved method's ID is sent to
// Remit, which checks it with the processor before attaching it. Every text it shows comes from the
// body's data-text-* attributes, in the customer's language: this script is the same for every
// language (its SHA-256 is pinned in the page's Content-Security-Policy).
(function () {
  "use strict";
  function text(name) {
    return document.body.getAttribute("data-text-" + name) || "";
  }
  var notice = document.getElementById("setup-status");
  function show(kind, text) {
    if (notice) {
      notice.className = "notice " + kind;
      notice.textContent = text;
    }
  }
  // complete sends the saved method to Remit and shows what it answered.
  function complete(url, paymentMethod, done) {
    show("info", text("saving"));
    fetch(url + "&paymentMethod=" + encodeURIComponent(paymentMethod), {
      method: "PUT",
      headers: { "Accept": "application/json" },
      credentials: "omit",
      cache: "no-store"
    }).then(function (res) {
      return res.json().then(function (body) {
        return { ok: res.ok, body: body };
      }, function () {
        return { ok: false, body: {} };
      });
    }).then(function (r) {
      var data = r.body && r.body.data;
      if (r.ok && data) {
        var pm = data.paymentMethod || {};
        document.body.setAttribute("data-session-status", "completed");
        show("success", pm.last4 ? text("saved-last4").replace("{last4}", function () { return pm.last4; }) : text("saved"));
        done(true);
        return;
      }
      var err = (r.body && r.body.error) || {};
      show("error", err.message || text("failed"));
      done(false);
    }, function () {
      show("error", text("offline"));
      done(false);
    });
  }

  var list = document.getElementById("test-cards");
  if (list) {
    var buttons = list.querySelectorAll("button[data-token]");
    Array.prototype.forEach.call(buttons, function (b) {
      b.addEventListener("click", function () {
        Array.prototype.forEach.call(buttons, function (x) { x.disabled = true; });
        complete(list.getAttribute("data-complete-url"), b.getAttribute("data-token"), function (ok) {
          if (ok) {
            list.hidden = true;
          } else {
            Array.prototype.forEach.call(buttons, function (x) { x.disabled = false; });
          }
        });
      });
    });
  }

  var form = document.getElementById("card-form");
  if (form) {
    if (typeof window.Stripe !== "function") {
      show("error", text("no-form"));
      return;
    }
    var stripe = window.Stripe(form.getAttribute("data-publishable-key"));
    var card = stripe.elements().create("card");
    card.mount("#card-element");
    var save = document.getElementById("save");
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      save.disabled = true;
      show("info", text("confirming"));
      stripe.confirmCardSetup(form.getAttribute("data-client-secret"), { payment_method: { card: card } }).then(function (r) {
        if (r.error) {
          show("error", r.error.message || text("rejected"));
          save.disabled = false;
          return;
        }
        complete(form.getAttribute("data-complete-url"), r.setupIntent.payment_method, function (ok) {
          if (ok) {
            form.hidden = true;
          } else {
            save.disabled = false;
          }
        });
      });
    });
  }
})();
