// Hosted invoice page: pays the invoice through the portal's pay route (the same hosted token)
// and shows the outcome. No third-party code; served inline from the binary. Every text it shows
// comes from the pay button's data-text-* attributes, in the customer's language: this script is
// the same for every language (its SHA-256 is pinned in the page's Content-Security-Policy).
(function () {
  "use strict";
  var button = document.getElementById("pay");
  var notice = document.getElementById("pay-status");
  var badge = document.getElementById("status");
  if (!button || !notice) {
    return;
  }
  function text(name) {
    return button.getAttribute("data-text-" + name) || "";
  }
  var PAID = text("paid");
  function show(kind, text) {
    notice.className = "notice " + kind;
    notice.textContent = text;
  }
  // refresh replaces the page's content with the paid invoice as the server renders it now
  // (status, amount paid, amount remaining), keeping the outcome in view.
  function refresh() {
    fetch(window.location.href, { credentials: "omit", cache: "no-store" }).then(function (res) {
      return res.ok ? res.text() : null;
    }).then(function (html) {
      if (!html) {
        return;
      }
      var doc = new DOMParser().parseFromString(html, "text/html");
      var fresh = doc.querySelector("main");
      var current = document.querySelector("main");
      if (!fresh || !current) {
        return;
      }
      current.replaceWith(document.importNode(fresh, true));
      document.body.setAttribute("data-invoice-status", doc.body.getAttribute("data-invoice-status") || "");
      notice = document.getElementById("pay-status");
      if (notice) {
        show("success", PAID);
      }
    }, function () {});
  }
  button.addEventListener("click", function () {
    button.disabled = true;
    show("info", text("processing"));
    fetch(button.getAttribute("data-pay-url"), {
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
        if (data.status === "paid") {
          button.hidden = true;
          if (badge) {
            badge.textContent = text("status-paid");
            badge.className = "badge status-paid";
          }
          document.body.setAttribute("data-invoice-status", "paid");
          show("success", PAID);
          refresh();
        } else {
          button.disabled = false;
          show("error", text("failed"));
        }
        return;
      }
      var err = (r.body && r.body.error) || {};
      var state = err.details && err.details.currentState;
      if (state && state !== "open") {
        button.hidden = true;
        var word = text("state-" + state) || state;
        show("info", text("closed").replace("{state}", function () { return word; }));
        return;
      }
      button.disabled = false;
      show("error", err.message || text("error"));
    }, function () {
      button.disabled = false;
      show("error", text("offline"));
    });
  });
}());
