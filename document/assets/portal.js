// Hosted invoice page: pays the invoice through the portal's pay route (the same hosted token)
// and shows the outcome. No third-party code; served inline from the binary.
(function () {
  "use strict";
  var button = document.getElementById("pay");
  var notice = document.getElementById("pay-status");
  var badge = document.getElementById("status");
  if (!button || !notice) {
    return;
  }
  var PAID = "Payment received. Thank you! This invoice is paid.";
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
    show("info", "Processing your payment…");
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
            badge.textContent = "Paid";
            badge.className = "badge status-paid";
          }
          document.body.setAttribute("data-invoice-status", "paid");
          show("success", PAID);
          refresh();
        } else {
          button.disabled = false;
          show("error", "The payment did not complete. You can try again.");
        }
        return;
      }
      var err = (r.body && r.body.error) || {};
      var state = err.details && err.details.currentState;
      if (state && state !== "open") {
        button.hidden = true;
        show("info", "This invoice can no longer be paid (it is " + state + "). Reload the page to see it.");
        return;
      }
      button.disabled = false;
      show("error", err.message || "The payment could not be made. Please try again.");
    }, function () {
      button.disabled = false;
      show("error", "Could not reach the server. Check your connection and try again.");
    });
  });
}());
