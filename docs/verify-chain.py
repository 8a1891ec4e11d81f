#!/usr/bin/env python3
"""Recompute a Remit merchant account's event chain from the API, independently of Remit's code.

    python3 verify-chain.py --url http://127.0.0.1:8080 --key rk_... \
        --environment sandbox --merchant-account ma_... [--anchor HASH]

Reads every event with GET /v1/events, orders them by sequence and checks that the sequences run
1, 2, 3, ... and that each hash is SHA-256 of the previous hash (the empty string before the first)
followed by the event's canonical JSON: the event without "hash", keys sorted, no whitespace,
characters as themselves, numbers as written. With --anchor, the chain must also contain that hash
(one you kept earlier), so events removed from its end are noticed too. Exits 1 on any break.
docs/verification.md explains the chain. Python 3.8+, standard library only.
"""
import argparse
import decimal
import hashlib
import json
import sys
import urllib.parse
import urllib.request


def canonical(value):
    """Canonical JSON: sorted keys, no whitespace, only '"', '\\' and controls escaped."""
    if isinstance(value, dict):
        return "{" + ",".join(canonical(k) + ":" + canonical(value[k]) for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, decimal.Decimal):  # a non-integer number, kept as written
        return str(value)
    return json.dumps(value, ensure_ascii=False)  # strings, integers, true, false, null


def link_hash(previous, event):
    body = {k: v for k, v in event.items() if k != "hash"}
    return hashlib.sha256((previous + canonical(body)).encode("utf-8")).hexdigest()


def fetch_events(url, key, environment, merchant_account):
    events, cursor = [], None
    while True:
        query = {"environment": environment, "merchantAccountId": merchant_account, "limit": "100"}
        if cursor:
            query["cursor"] = cursor
        req = urllib.request.Request(url.rstrip("/") + "/v1/events?" + urllib.parse.urlencode(query),
                                     headers={"Authorization": "Bearer " + key})
        with urllib.request.urlopen(req) as res:
            page = json.loads(res.read().decode("utf-8"), parse_float=decimal.Decimal)["data"]
        events.extend(page["items"])
        cursor = page.get("nextCursor")
        if not cursor:
            return events


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--environment", default="sandbox")
    ap.add_argument("--merchant-account", required=True)
    ap.add_argument("--anchor", help="a hash of this chain kept earlier: it must still be in the chain")
    args = ap.parse_args()

    events = sorted(fetch_events(args.url, args.key, args.environment, args.merchant_account),
                    key=lambda e: e["sequence"])
    previous, broken = "", 0
    for want, event in enumerate(events, start=1):
        if event["sequence"] != want:
            print(f"{event['eventId']}: sequence {event['sequence']}, expected {want}")
            return 1
        if link_hash(previous, event) != event["hash"]:
            print(f"{event['eventId']} (sequence {want}): hash does not match its content and predecessor")
            broken += 1
        previous = event["hash"]
    if args.anchor and args.anchor not in {e["hash"] for e in events}:
        print(f"the anchor {args.anchor} is not in the chain: events were removed or rewritten")
        return 1
    if broken:
        return 1
    print(f"ok: {len(events)} events, chain head {previous or '(empty)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
