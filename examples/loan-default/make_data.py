#!/usr/bin/python3
"""Generates the loan-default example's data: synthetic loan applications (income, debt ratio,
age, years employed, region) and whether the loan defaulted, from a fixed seed, so every machine
writes the same bytes. The training records are two CSV shards without an id column; the eval set
is one CSV file.

Usage: make_data.py OUT_DIR      (writes OUT_DIR/data/applications-{1,2}.csv and OUT_DIR/eval.csv)
"""
import pathlib
import sys

import numpy as np

REGIONS = ["north", "south", "east", "west"]
HEADER = "income,debt_ratio,age,years_employed,region,default\n"


def applications(rng, n):
    income = rng.lognormal(10.6, 0.45, n)
    debt_ratio = rng.beta(2.0, 5.0, n)
    age = rng.integers(21, 70, n)
    years = np.minimum(rng.exponential(6.0, n), age - 18)
    region = rng.integers(0, len(REGIONS), n)
    logit = (-1.2 - 0.9 * (np.log(income) - 10.6) + 4.0 * (debt_ratio - 0.28)
             - 0.03 * (age - 40) - 0.08 * (years - 6) + np.array([0.0, 0.4, -0.3, 0.2])[region])
    default = rng.random(n) < 1 / (1 + np.exp(-logit))
    return [f"{income[i]:.2f},{debt_ratio[i]:.4f},{age[i]},{years[i]:.1f},{REGIONS[region[i]]},"
            f"{int(default[i])}\n" for i in range(n)]


def main():
    out = pathlib.Path(sys.argv[1])
    rng = np.random.default_rng(20261205)
    rows = applications(rng, 2400)
    (out / "data").mkdir(parents=True, exist_ok=True)
    for shard, part in enumerate((rows[:1200], rows[1200:2000]), start=1):
        (out / "data" / f"applications-{shard}.csv").write_text(HEADER + "".join(part))
    (out / "eval.csv").write_text(HEADER + "".join(rows[2000:]))
    print(f"{out}/data: 2 shards, 2000 applications; {out}/eval.csv: 400")


if __name__ == "__main__":
    main()
