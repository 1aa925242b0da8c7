"""A small restaurant API for the `http` executor's tests: FastAPI over its own SQLite file
(RESTAURANT_API_DB). Bookings honour `Idempotency-Key`. `POST /_faults` makes the next requests to a path
fail: answer 500 (after doing the work, as a server that crashes after its commit does) or answer late.
Its answers are typed (response models) so that its own `/openapi.json` says what each call returns, as an
app written for `import-openapi` would; the test controls are left out of that document."""

import asyncio
import os
import sqlite3
import uuid

from fastapi import FastAPI, Header, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

app = FastAPI(title="Restaurant reservations")
faults: dict[str, dict] = {}   # path prefix -> {"fail_after_work": n, "delay_s": s}
attempts: list[dict] = []      # every request seen: path and idempotency key


def db() -> sqlite3.Connection:
    connection = sqlite3.connect(os.environ["RESTAURANT_API_DB"], isolation_level=None)
    connection.executescript("""
        CREATE TABLE IF NOT EXISTS restaurants (id TEXT PRIMARY KEY, name TEXT UNIQUE COLLATE NOCASE);
        CREATE TABLE IF NOT EXISTS availability (id TEXT PRIMARY KEY, restaurant_id TEXT, party_size INTEGER,
                                                 date TEXT, time TEXT);
        CREATE TABLE IF NOT EXISTS bookings (id TEXT PRIMARY KEY, idempotency_key TEXT UNIQUE,
                                             availability_id TEXT, name TEXT, phone TEXT);
        INSERT OR IGNORE INTO restaurants VALUES ('r1', 'Bella Notte'), ('r2', 'The Oak Room');
    """)
    return connection


def fault_for(path: str) -> dict:
    return next((fault for prefix, fault in faults.items() if path.startswith(prefix)), {})


@app.middleware("http")
async def record_and_delay(request: Request, call_next):
    if not request.url.path.startswith("/_"):
        attempts.append({"path": request.url.path, "key": request.headers.get("idempotency-key")})
    delay = fault_for(request.url.path).get("delay_s")
    if delay:
        await asyncio.sleep(delay)
    response = await call_next(request)
    fault = fault_for(request.url.path)
    if fault.get("fail_after_work", 0) > 0:
        fault["fail_after_work"] -= 1
        return JSONResponse(status_code=500, content={"detail": "the server fell over after its commit"})
    return response


@app.post("/_faults", include_in_schema=False)
def set_faults(body: dict) -> dict:
    faults.clear()
    faults.update(body)
    attempts.clear()
    return {"ok": True}


@app.get("/_attempts", include_in_schema=False)
def get_attempts() -> list[dict]:
    return attempts


class Restaurant(BaseModel):
    id: str


class Availability(BaseModel):
    id: str


class BookingConfirmation(BaseModel):
    id: str


@app.get("/restaurants", summary="Find a restaurant by its name")
def find_restaurant(name: str) -> Restaurant:
    # A search, as such APIs are: "oak room" finds The Oak Room.
    row = db().execute("SELECT id FROM restaurants WHERE name LIKE ?", (f"%{name.strip()}%",)).fetchone()
    if row is None:
        raise HTTPException(status_code=404, detail=f"no restaurant named {name}")
    return Restaurant(id=row[0])


class AvailabilityQuery(BaseModel):
    party_size: int
    date: str
    time: str


@app.post("/restaurants/{restaurant_id}/availability",
          summary="Check that a restaurant has a table for a party on a date at a time")
def check_availability(restaurant_id: str, body: AvailabilityQuery) -> Availability:
    slot_id = uuid.uuid4().hex[:12]
    db().execute("INSERT INTO availability VALUES (?, ?, ?, ?, ?)",
                 (slot_id, restaurant_id, body.party_size, body.date, body.time))
    return Availability(id=slot_id)


class Booking(BaseModel):
    availability_id: str
    name: str
    phone: str


@app.post("/bookings", summary="Book a table that is available, under a name and a phone number")
def book_table(body: Booking, idempotency_key: str | None = Header(None, include_in_schema=False)) -> BookingConfirmation:
    connection = db()
    if idempotency_key:
        row = connection.execute("SELECT id FROM bookings WHERE idempotency_key = ?", (idempotency_key,)).fetchone()
        if row:
            return BookingConfirmation(id=row[0])
    booking_id = uuid.uuid4().hex[:12]
    connection.execute("INSERT INTO bookings VALUES (?, ?, ?, ?, ?)",
                       (booking_id, idempotency_key, body.availability_id, body.name, body.phone))
    return BookingConfirmation(id=booking_id)


db().close()  # the schema and the restaurants exist before the first request
