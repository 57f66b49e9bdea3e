#!/usr/bin/python3
"""Writes docs/subsample-vectors.json: test vectors for the subsample rule (docs/design.md, "The
subsample rule"), computed here with hashlib and Python's exact integers only, independently of
the job kit and of the C++ code that are tested against them.

Usage: make_subsample_vectors.py [OUT]   (default: docs/subsample-vectors.json beside this repo)
"""
import hashlib
import json
import pathlib
import sys

TWO64 = 2**64


def parse_fraction(text):
    """(numerator, digits) of a valid fraction text, or None: [0-9]+ ("." [0-9]+)?, in (0, 1],
    at most 18 digits after the point once trailing zeros are dropped."""
    whole, point, part = text.partition(".")
    if not (whole.isascii() and whole.isdigit()) or (point and not (part.isascii() and part.isdigit())):
        return None
    part = part.rstrip("0")
    if len(part) > 18:
        return None
    numerator, digits = int(whole + part), len(part)
    if numerator == 0 or numerator > 10**digits:
        return None
    return numerator, digits


def canonical(text):
    whole, _, part = text.partition(".")
    whole, part = whole.lstrip("0") or "0", part.rstrip("0")
    return whole + ("." + part if part else "")


def h_of(salt, key):
    digest = hashlib.sha256(salt.encode("utf-8") + b":" + key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def member(h, fraction):
    m, d = parse_fraction(fraction)
    return h * 10**d < m * TWO64


def threshold(fraction):
    m, d = parse_fraction(fraction)
    return -(-(m * TWO64) // 10**d)


def csv_records(data):
    """Records of a CSV document's bytes: split at LF or CRLF outside double quotes, the line
    ending not part of the record, empty lines skipped, the first record (the header) dropped."""
    records, current, quoted = [], bytearray(), False
    for byte in data:
        if byte == ord('"'):
            quoted = not quoted
        if byte == ord("\n") and not quoted:
            if current.endswith(b"\r"):
                current = current[:-1]
            if current:
                records.append(bytes(current))
            current = bytearray()
        else:
            current.append(byte)
    if current.endswith(b"\r"):
        current = current[:-1]
    if current:
        records.append(bytes(current))
    return records[1:]


def main():
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else \
        pathlib.Path(__file__).resolve().parents[2] / "docs" / "subsample-vectors.json"
    salts = ["digits-subsample-1", "s", "a:b", "sel\u00e9ction"]
    keys = ["optdigits-0001", "optdigits-0002", "7", "007", "-3", "1.0", "a:b", " padded ",
            "\u00e9", "\u65e5\u672c", "\U0001f642", "x" * 300]
    fractions = ["0.25", "0.3", "1", "0.5", "0.000001", "0.999999999999999999"]
    membership = []
    for salt in salts:
        for i, key in enumerate(keys):
            for j, fraction in enumerate(fractions):
                if (i + j) % 2 and fraction not in ("0.25", "0.3"):
                    continue
                h = h_of(salt, key)
                membership.append({"salt": salt, "key": key, "fraction": fraction,
                                   "h": f"{h:016x}", "member": member(h, fraction)})

    boundary = []
    for fraction in ["0.1", "0.25", "0.3", "0.7", "0.9", "0.000001", "0.999999999999999999", "1"]:
        t = threshold(fraction)
        cases = [(t - 1, "T - 1: the largest member")]
        if t < TWO64:
            cases.append((t, "T: the smallest non-member"))
        as_double = float(fraction) * TWO64  # what a floating-point implementation compares with
        wrong = [h for h in (int(as_double) - 1, int(as_double), int(as_double) + 1, t - 2, t + 1)
                 if 0 <= h < TWO64 and (h < as_double) != member(h, fraction)]
        for h in sorted(set(wrong))[:2]:
            cases.append((h, "a comparison with the double fraction * 2^64 gets this one wrong"))
        for h, note in cases:
            boundary.append({"fraction": fraction, "h": f"{h:016x}", "member": member(h, fraction),
                             "note": note})

    fraction_texts = []
    for text in ["0.25", "0.250", "00.5", "1", "1.0", "1.000", "0.3", "0.000001",
                 "0.999999999999999999", "0.1000000000000000000000",
                 "0", "0.0", "1.5", "2", "1.0000000000000000001", "-0.5", "+0.5", ".5", "0.",
                 "1e-1", " 0.5", "0.5 ", "0,5", "", "0.0000000000000000001", "\u0660.5"]:
        parsed = parse_fraction(text)
        entry = {"text": text, "valid": parsed is not None}
        if parsed:
            entry.update({"canonical": canonical(text), "numerator": parsed[0],
                          "digits": parsed[1], "threshold": str(threshold(text))})
        fraction_texts.append(entry)

    document = b"x,y,label\n1.5,2,a\r\n\"quoted, with comma\",3,b\n\n\"two\nlines\",4,c\n1.5,2,a\n5,6,d"
    csv = {"document": document.decode("utf-8"),
           "records": [{"bytes": r.decode("utf-8"), "key": hashlib.sha256(r).hexdigest()}
                       for r in csv_records(document)]}

    digest_keys = ["optdigits-0003", "optdigits-0001", "\u00e9", "optdigits-0003", "7", "10"]
    distinct = sorted(set(k.encode("utf-8") for k in digest_keys))
    keys_digest = {"keys": digest_keys, "distinct": len(distinct),
                   "sha256": hashlib.sha256(b"".join(k + b"\n" for k in distinct)).hexdigest()}

    vectors = {
        "rule": "reverify subsample rule v1: docs/design.md, \"The subsample rule\"",
        "membership": membership,
        "boundary": boundary,
        "fractions": fraction_texts,
        "csv_content_keys": csv,
        "keys_digest": keys_digest,
    }
    out.write_text(json.dumps(vectors, indent=1, ensure_ascii=False) + "\n")
    print(f"{out}: {len(membership)} membership, {len(boundary)} boundary, "
          f"{len(fraction_texts)} fraction texts, {len(csv['records'])} CSV records")


if __name__ == "__main__":
    main()
