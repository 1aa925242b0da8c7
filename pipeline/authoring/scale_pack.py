"""The scale benchmark: a generated pack with 500 goals (50 business objects x 10 operations) and requests
for it, to measure goal retrieval and prompt size when every goal cannot be shown to the LLM.

Each goal has its own description and three example requests. The benchmark requests are phrased with
other verbs, other names of the objects and other context than the examples, so retrieval is measured on
wording it has not seen. Everything is deterministic (seeded).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from pipeline.authoring.writer import GENERIC_ERRORS, call_pack_files, write_pack

NAME = "catalog500"
GENERATOR = "make-scale-pack"

# object: (name used in descriptions and examples, other names used only in requests, what it is)
OBJECTS = {
    "invoice": ("invoice", ["bill to a client", "customer bill"], "a bill sent to a customer"),
    "purchase_order": ("purchase order", ["PO", "order to a supplier"], "an order placed with a supplier"),
    "shipment": ("shipment", ["delivery", "parcel going out"], "goods sent to a customer"),
    "refund": ("refund", ["money back", "reimbursement to a buyer"], "money returned to a customer"),
    "subscription": ("subscription", ["recurring plan", "membership plan"], "a recurring paid plan"),
    "support_ticket": ("support ticket", ["help desk case", "customer complaint case"], "a customer support case"),
    "employee_record": ("employee record", ["staff file", "personnel file"], "an employee's HR file"),
    "payroll_run": ("payroll run", ["salary batch", "pay cycle"], "one batch of salary payments"),
    "expense_claim": ("expense claim", ["reimbursement request", "out-of-pocket claim"], "an employee's claim for costs"),
    "vendor": ("vendor", ["supplier", "seller we buy from"], "a company we buy from"),
    "customer_account": ("customer account", ["client profile", "buyer account"], "a customer's account"),
    "product_listing": ("product listing", ["catalog entry", "item page in the store"], "a product for sale online"),
    "inventory_item": ("inventory item", ["stock unit", "SKU on the shelf"], "a stocked item in the warehouse"),
    "warehouse_transfer": ("warehouse transfer", ["stock move between depots", "inter-site stock movement"], "goods moved between warehouses"),
    "sales_lead": ("sales lead", ["prospect", "potential buyer"], "a potential customer"),
    "marketing_campaign": ("marketing campaign", ["promo push", "advertising drive"], "a marketing effort"),
    "contract": ("contract", ["signed agreement", "legal agreement"], "a legal agreement"),
    "room_booking": ("meeting room booking", ["conference room reservation", "boardroom slot"], "a reserved meeting room"),
    "travel_request": ("travel request", ["business trip request", "trip approval form"], "a request to travel for work"),
    "laptop": ("company laptop", ["work notebook computer", "staff computer"], "a computer issued to staff"),
    "software_license": ("software license", ["app seat", "program licence key"], "a paid license for software"),
    "user_access": ("user access", ["login permissions", "system account rights"], "a person's permissions in a system"),
    "job_posting": ("job posting", ["vacancy ad", "open role advert"], "an advertised open position"),
    "job_candidate": ("job candidate", ["applicant", "person who applied"], "a person applying for a job"),
    "interview": ("interview", ["hiring conversation", "candidate meeting"], "a scheduled job interview"),
    "timesheet": ("timesheet", ["hours log", "worked-hours record"], "hours worked by an employee"),
    "leave_request": ("leave request", ["vacation request", "time-off ask"], "a request for time off"),
    "budget": ("budget", ["spending plan", "cost allocation"], "planned spending for a team"),
    "bank_reconciliation": ("bank reconciliation", ["statement matching", "ledger-to-bank check"], "matching books to the bank statement"),
    "tax_filing": ("tax filing", ["tax return", "VAT submission"], "a tax return to the authorities"),
    "asset": ("fixed asset", ["piece of equipment we own", "capital equipment"], "equipment the company owns"),
    "maintenance_order": ("maintenance work order", ["repair job", "fix-it request for the facilities team"], "a repair job for facilities"),
    "delivery_route": ("delivery route", ["driver's route", "drop-off itinerary"], "the stops of a delivery driver"),
    "return_authorization": ("return authorization", ["RMA", "product return permit"], "permission for a customer to return goods"),
    "quote": ("sales quote", ["price estimate", "quotation for a client"], "a price offer to a customer"),
    "price_list": ("price list", ["rate card", "pricing sheet"], "the prices we charge"),
    "discount_code": ("discount code", ["coupon", "promo voucher"], "a code that lowers a price"),
    "gift_card": ("gift card", ["store credit voucher", "prepaid card"], "a prepaid card for the store"),
    "loyalty_account": ("loyalty account", ["rewards membership", "points balance holder"], "a customer's rewards program account"),
    "newsletter": ("newsletter", ["email digest", "mailing to subscribers"], "a regular email to subscribers"),
    "survey": ("customer survey", ["feedback questionnaire", "satisfaction poll"], "a questionnaire for customers"),
    "webinar": ("webinar", ["online seminar", "live web session"], "an online presentation"),
    "event_registration": ("event registration", ["conference sign-up", "attendee booking"], "a sign-up for an event"),
    "project": ("project", ["initiative", "workstream"], "a piece of planned work"),
    "task": ("task", ["to-do item", "action item"], "one piece of work"),
    "document": ("shared document", ["file in the drive", "team doc"], "a file in the document store"),
    "server": ("cloud server", ["virtual machine", "VM instance"], "a machine in the cloud"),
    "backup": ("data backup", ["snapshot of the data", "restore point"], "a saved copy of data"),
    "security_incident": ("security incident", ["breach report", "suspicious activity case"], "a possible security problem"),
    "phone_line": ("phone line", ["desk number", "telephone extension"], "a company telephone line"),
}

# operation: (description template, argument, example phrasings for the pack, phrasings for requests)
OPERATIONS = {
    "create": ("Create a new {o} ({gloss}).", "details",
               ["create a new {o}", "set up a {o} for {ctx}", "I need to add a {o}"],
               ["please open up a fresh {alt}", "can you make another {alt} {ctx2}", "start a brand new {alt}"]),
    "cancel": ("Cancel an existing {o} ({gloss}) so it no longer goes ahead.", "reference",
               ["cancel the {o}", "call off this {o} for {ctx}", "stop the {o} from going ahead"],
               ["please void that {alt}", "we no longer want the {alt} {ctx2}, kill it", "abort the {alt}"]),
    "status": ("Check the current status of a {o} ({gloss}).", "reference",
               ["what's the status of the {o}", "check on the {o} for {ctx}", "where is my {o} at"],
               ["any update on the {alt}?", "has the {alt} {ctx2} progressed", "track the progress of the {alt}"]),
    "list": ("List all {o}s ({gloss}), optionally filtered.", None,
             ["list all {o}s", "show every {o} for {ctx}", "give me an overview of the {o}s"],
             ["which {alt}s do we have", "enumerate the {alt}s {ctx2}", "display all the {alt}s on file"]),
    "update": ("Change the details of an existing {o} ({gloss}).", "reference",
               ["update the {o}", "edit the details of the {o} for {ctx}", "change something on the {o}"],
               ["modify the {alt}", "fix the info on the {alt} {ctx2}", "amend the {alt} please"]),
    "approve": ("Approve a pending {o} ({gloss}).", "reference",
                ["approve the {o}", "sign off on the {o} for {ctx}", "give the green light to the {o}"],
                ["ok the pending {alt}", "authorize the {alt} {ctx2}", "I'm happy to accept the {alt}, confirm it"]),
    "export": ("Export {o}s ({gloss}) to a spreadsheet file.", None,
               ["export the {o}s to a spreadsheet", "download the {o}s for {ctx} as CSV", "get the {o}s into Excel"],
               ["dump the {alt}s into a csv", "send me a spreadsheet of the {alt}s {ctx2}", "extract the {alt}s as a file"]),
    "assign": ("Assign a {o} ({gloss}) to a person responsible for it.", "reference",
               ["assign the {o} to someone", "give ownership of the {o} for {ctx} to a colleague", "make a teammate responsible for the {o}"],
               ["hand the {alt} over to a coworker", "route the {alt} {ctx2} to another owner", "who should own the {alt}? reassign it"]),
    "comment": ("Add a note or comment to a {o} ({gloss}).", "reference",
                ["add a note to the {o}", "comment on the {o} for {ctx}", "write a remark on the {o}"],
                ["annotate the {alt}", "leave a message on the {alt} {ctx2}", "attach a quick note to the {alt}"]),
    "archive": ("Archive an old {o} ({gloss}) so it is kept but hidden.", "reference",
                ["archive the {o}", "move the old {o} for {ctx} to the archive", "put the {o} into storage"],
                ["file away the {alt}", "retire the stale {alt} {ctx2}, keep it for records", "tuck the {alt} into the archive"]),
}

CONTEXTS = ["the Berlin office", "the marketing team", "Acme Corp", "next quarter", "the new hire"]
REQUEST_CONTEXTS = ["for our Denver branch", "from last Tuesday", "for the Lopez account", "before Friday",
                    "for the audit", "for team Orion"]
ARGUMENTS = {
    "details": {"description": "what the new item should hold, in the request's words", "normalizer": "lowercase_text",
                "examples": ["for the Berlin office"]},
    "reference": {"description": "which existing item, in the request's words (a number or name)",
                  "normalizer": "lowercase_text", "examples": ["number 4471"]},
}


def goal_name(obj: str, op: str) -> str:
    return f"{op}_{obj}"


def scale_spec() -> dict:
    goals, apis = {}, {}
    for obj, (name, _alts, gloss) in OBJECTS.items():
        for i, (op, (description, argument, examples, _requests)) in enumerate(OPERATIONS.items()):
            goal = goal_name(obj, op)
            ctx = CONTEXTS[(len(obj) + i) % len(CONTEXTS)]
            goals[goal] = {"api": f"{goal}_api", "description": description.format(o=name, gloss=gloss),
                           "examples": [e.format(o=name, ctx=ctx) for e in examples]}
            apis[f"{goal}_api"] = {"arguments": [argument] if argument else [], "produces": f"{obj}_result",
                                   "description": description.format(o=name, gloss=gloss)}
    return {"name": NAME, "description": "A generated catalog of 500 business operations (the scale benchmark).",
            "goals": goals, "apis": apis, "arguments": ARGUMENTS, "errors": dict(GENERIC_ERRORS)}


def scale_requests(seed: int = 7, two_goal: int = 100) -> list[dict]:
    """Two single-goal requests per goal (other verbs, other object names), and two-goal requests."""
    rng = random.Random(seed)
    records, singles = [], []
    for obj, (_name, alts, _gloss) in OBJECTS.items():
        for op, (_d, _a, _examples, phrasings) in OPERATIONS.items():
            for phrasing in rng.sample(phrasings, 2):
                text = phrasing.format(alt=rng.choice(alts), ctx2=rng.choice(REQUEST_CONTEXTS))
                singles.append((text, goal_name(obj, op)))
    for n, (text, goal) in enumerate(singles, 1):
        records.append({"id": f"scale-{n:04d}", "domain": NAME, "query": text, "goals": [goal]})
    for n in range(two_goal):
        (a, ga), (b, gb) = rng.sample(singles, 2)
        if ga != gb:
            records.append({"id": f"scale-2g-{n:03d}", "domain": NAME, "query": f"{a}, and then {b}",
                            "goals": [ga, gb]})
    return records


def make_scale_pack(root: Path, requests_file: Path | None = None) -> dict:
    spec = scale_spec()
    rules, pddl = call_pack_files(spec, GENERATOR)
    paths = write_pack(root, spec, rules, pddl,
                       header=f"{NAME}: generated by `nesyplan {GENERATOR}` (pipeline/authoring/scale_pack.py); "
                              "do not edit by hand.")
    if requests_file is not None:
        requests_file.parent.mkdir(parents=True, exist_ok=True)
        with open(requests_file, "w", encoding="utf-8") as out:
            for record in scale_requests():
                out.write(json.dumps(record) + "\n")
    return {"goals": len(spec["goals"]), "pack": str(paths["yaml"]), "requests": str(requests_file or "")}
