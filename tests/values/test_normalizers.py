"""The SPEC's value normalisation, helper by helper (dates resolved against a fixed today)."""

from datetime import date

import pytest

from pipeline.values import dates
from pipeline.values.normalizers import amount, choice, email, lowercase_text, person_name, phone

TODAY = date(2024, 10, 15)


def period(text, today=TODAY):
    p = dates.resolve_period(text, today)
    return None if p is None else (dates.format_date(p.start), dates.format_date(p.end))


@pytest.mark.parametrize("text, expected", [
    ("nov 2023", ("11/01/2023", "11/30/2023")),
    ("March", ("03/01/2024", "03/31/2024")),            # has begun this year
    ("November", ("11/01/2023", "11/30/2023")),         # not yet begun this year: last year's
    ("October", ("10/01/2024", "10/31/2024")),          # the one containing today counts
    ("Q1 2023", ("01/01/2023", "03/31/2023")),
    ("1Q23", ("01/01/2023", "03/31/2023")),
    ("4Q23", ("10/01/2023", "12/31/2023")),
    ("Q1 '23", ("01/01/2023", "03/31/2023")),
    ("first quarter of 2023", ("01/01/2023", "03/31/2023")),
    ("Q4", ("10/01/2024", "12/31/2024")),
    ("2022", ("01/01/2022", "12/31/2022")),
    ("fy21", ("01/01/2021", "12/31/2021")),
    ("FY 2021", ("01/01/2021", "12/31/2021")),
    ("FY23", ("01/01/2023", "12/31/2023")),
    ("H1 2023", ("01/01/2023", "06/30/2023")),
    ("2H25", ("07/01/2025", "12/31/2025")),
    ("first half of 2023", ("01/01/2023", "06/30/2023")),
    ("second half of last year", ("07/01/2023", "12/31/2023")),
    ("last month", ("09/01/2024", "09/30/2024")),
    ("last quarter", ("07/01/2024", "09/30/2024")),
    ("last year", ("01/01/2023", "12/31/2023")),
    ("nine years back", ("01/01/2015", "12/31/2015")),  # the year that many years back, whole
    ("two months ago", ("08/01/2024", "08/31/2024")),
    ("this month", ("10/01/2024", "10/31/2024")),
    ("this quarter", ("10/01/2024", "12/31/2024")),
    ("this year", ("01/01/2024", "12/31/2024")),
    ("year to date", ("01/01/2024", "10/15/2024")),
    ("so far this year", ("01/01/2024", "10/15/2024")),
    ("last 30 days", ("09/15/2024", "10/15/2024")),
    ("past 7 days", ("10/08/2024", "10/15/2024")),
    ("past ten days", ("10/05/2024", "10/15/2024")),
    ("from March to May 2023", ("03/01/2023", "05/31/2023")),
    ("march to may 2023", ("03/01/2023", "05/31/2023")),
    ("January 15, 2023 through April 30, 2023", ("01/15/2023", "04/30/2023")),
    ("between Q1 2023 and Q2 2023", ("01/01/2023", "06/30/2023")),
    ("beginning 1/31/2024, ending 3/1/2024", ("01/31/2024", "03/01/2024")),
    ("from November to February", ("11/01/2023", "02/29/2024")),  # end: first such after the start
    ("2021 to 2022", ("01/01/2021", "12/31/2022")),
    ("01/15/2023", ("01/15/2023", "01/15/2023")),
    ("2023-02-28", ("02/28/2023", "02/28/2023")),
])
def test_periods(text, expected):
    assert period(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("on March 3rd", "03/03/2024"),
    ("today", "10/15/2024"),
    ("yesterday", "10/14/2024"),
    ("the day before yesterday", "10/13/2024"),
    ("two days ago", "10/13/2024"),
    ("Dec 24", "12/24/2023"),
    ("the 3rd of June, 2022", "06/03/2022"),
])
def test_days(text, expected):
    assert period(text) == (expected, expected)


def test_a_year_on_the_start_carries_to_the_end():
    p = dates.resolve_span("October 2023", "January", TODAY)
    assert (p.start, p.end) == (date(2023, 10, 1), date(2024, 1, 31))


@pytest.mark.parametrize("text", ["sometime soon", "the good old days", "February 30, 2023", "", "Q5 2023"])
def test_unreadable_periods_give_nothing(text):
    assert period(text) is None


@pytest.mark.parametrize("text, expected", [
    ("$4,500", "4500.00"), ("75 bucks", "75.00"), ("2k", "2000.00"), ("4.5k", "4500.00"),
    ("a grand", "1000.00"), ("five hundred dollars", "500.00"), ("$1,234.5", "1234.50"),
    ("4500.00", "4500.00"), ("twenty-five dollars", "25.00"), ("two thousand five hundred", "2500.00"),
    ("USD 300", "300.00"),
])
def test_amounts(text, expected):
    assert amount(text) == expected


@pytest.mark.parametrize("text", ["some money", "", "-", "0"])
def test_unreadable_amounts(text):
    assert amount(text) is None


CHANNELS = dict(values=["chat", "phone", "video"], synonyms={
    "phone": ["call", "phone call", "ring", "on the phone"], "chat": ["live chat", "message"],
    "video": ["video call", "zoom", "video chat"]})


@pytest.mark.parametrize("text, expected", [
    ("call", "phone"), ("phone call", "phone"), ("give me a ring", "phone"), ("on the phone", "phone"),
    ("live chat", "chat"), ("Message", "chat"), ("video chat", "video"), ("zoom", "video"),
    ("speak", None), ("talk", None), ("connect", None), ("reach", None),
])
def test_channels(text, expected):
    assert choice(text, **CHANNELS) == expected


def test_channel_words_in_the_pack(pack):
    spec = pack.spec.arguments["contact_channel"]
    for word, expected in [("ring", "phone"), ("zoom", "video"), ("live chat", "chat"), ("talk", None)]:
        assert choice(word, values=spec.values, synonyms=spec.synonyms) == expected


@pytest.mark.parametrize("argument, text, expected", [
    ("contact_topic", "payroll", "Payroll"),
    ("contact_topic", "BANK RECONCILIATION", "Bank Reconciliation"),
    ("contact_topic", "forgot my password", "password"),
    ("contact_topic", "tax filing", "Tax Filing"),
    ("contact_topic", "the weather", None),
    ("help_topic", "reconcilation", "reconciliation"),
    ("help_topic", "link my bank account", "connect to bank"),
    ("help_topic", "Write Off Bad Debt", "write off bad debt"),
    ("help_topic", "timesheet", "timesheets"),
    ("help_topic", "quantum physics", None),
])
def test_topics(pack, argument, text, expected):
    spec = pack.spec.arguments[argument]
    assert choice(text, values=spec.values, synonyms=spec.synonyms) == expected


@pytest.mark.parametrize("text, expected", [
    ("henry", "Henry"), ("Mr. Davis", "Davis"), ("DR SMITH", "Smith"), ("o'brien", "O'Brien"),
    ("McDonald", "McDonald"), ("mary-jane", "Mary-Jane"), ("henry.davis@example.com", None), ("42", None),
])
def test_names(text, expected):
    assert person_name(text) == expected


def test_email_phone_and_detail():
    assert email("Henry.Davis@Example.COM") == "henry.davis@example.com"
    assert email("no address here") is None
    assert phone("(617) 555-0101") == "617-555-0101"
    assert phone("617.555.0101") == "617-555-0101"
    assert phone("+1 617 555 0101") == "617-555-0101"
    assert phone("555-0101") is None
    assert lowercase_text("  Website Design. ") == "website design"
    assert lowercase_text("for Piano Lessons") == "piano lessons"


# --- the slot types of typed PDL workflows ------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("5", "5"), ("seven of us", "7"), ("a party of 3", "3"), ("just the two of us", "2"),
    ("nine people, five grown-ups and four kids", "9"), ("we are a group of 12", "12"), ("zero bags", "0"),
    ("at 7:30", None), ("the 4th", None), ("$40", None), ("3 or 4", None), ("a few", None),
])
def test_counts(text, expected):
    from pipeline.values.normalizers import integer

    assert integer(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("6:45 in the evening", "18:45"), ("9am", "09:00"), ("9 p.m.", "21:00"), ("noon", "12:00"),
    ("quarter past eight pm", "20:15"), ("half past six in the morning", "06:30"), ("2 in the afternoon", "14:00"),
    ("afternoon 1:30", "13:30"), ("morning 11:15", "11:15"),
    ("12:15pm", "12:15"), ("12 am", "00:00"), ("tonight at 9", "21:00"), ("10:05", "10:05"),
    ("25:00", None), ("between 6 and 7pm", None), ("soon", None),
    ("around seven o'clock", "07:00"), ("around seven oclock", "07:00"),  # the clock word typed without its mark
])
def test_times(text, expected):
    from pipeline.values.normalizers import time_of_day

    assert time_of_day(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("my id is 4410 2298", "44102298"), ("33-0071-5", "3300715"), ("0099", "0099"),
    ("12 and 34", None), ("none", None), ("12", None),
])
def test_identifiers(text, expected):
    from pipeline.values.normalizers import digits

    assert digits(text) == expected


def test_proper_names_of_things_are_capitalised_as_written():
    from pipeline.values.normalizers import title_text

    assert title_text("the blue door bistro") == "The Blue Door Bistro"
    assert title_text("McDonald's") == "McDonald's" and title_text("  ") is None and title_text("42") is None
    assert title_text("730215") == "730215"  # a code of digits is a machine's name; a short number a count


@pytest.mark.parametrize("text, expected", [  # today is Wednesday 2025-03-12
    ("tonight", date(2025, 3, 12)), ("tomorrow evening", date(2025, 3, 13)), ("tomorow", date(2025, 3, 13)),
    ("the day after tomorrow", date(2025, 3, 14)), ("this saturday", date(2025, 3, 15)),
    ("wednesday", date(2025, 3, 12)), ("next wednesday", date(2025, 3, 19)),
    ("monday the 31st", date(2025, 3, 31)), ("the 2nd", date(2025, 4, 2)), ("the 20th", date(2025, 3, 20)),
    ("march 1", date(2026, 3, 1)), ("april 3rd", date(2025, 4, 3)), ("halloween", date(2025, 10, 31)),
    ("christmas eve", date(2025, 12, 24)), ("03/01/2025", date(2025, 3, 1)),
    ("friday next week", date(2025, 3, 21)), ("next week on monday", date(2025, 3, 17)),
    ("thursday this week", date(2025, 3, 13)), ("monday this week", None),  # a day gone is no day ahead
    ("next month", None), ("someday", None),
])
def test_days_ahead(text, expected):
    assert dates.resolve_future_day(text, date(2025, 3, 12)) == expected


def test_a_birthday_is_read_without_the_word_born():
    assert dates.resolve_period("born the 3rd of may 1981", date(2025, 3, 12)) == dates.Period(date(1981, 5, 3), date(1981, 5, 3))


def test_a_listed_value_of_no_words_is_named_nowhere():
    """A spec's enum may list '' or '-' ("not set"): it names no words, so no span of the request, even at
    its end (it used to give a span past the last word, and the reader an IndexError)."""
    from pipeline.values.normalizers import choice_spans

    tokens = ["sort", "by", "popularity", "desc"]
    found = choice_spans(tokens, ["", "-", "popularity.desc", "popularity.asc"])
    assert found == [(2, 3, "popularity.desc")]
    assert choice_spans([], ["", "-"]) == []


@pytest.mark.parametrize("text, expected", [
    ("cancel 4ef9a417-02e9-4d39-ad75-9611e0fcc33c please", "4ef9a417-02e9-4d39-ad75-9611e0fcc33c"),  # whole
    ("order #1183", "1183"), ("invoice INV2-7F3K", "INV2-7F3K"), ("pet 14.", "14"),
    ("the pet Rex", None), ("pets 12 and 14", None), ("", None)])
def test_an_identifier_is_one_word_with_a_digit_as_written(text, expected):
    from pipeline.values.normalizers import identifier

    assert identifier(text) == expected
