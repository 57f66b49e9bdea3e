"""The job kit's subsample rule against docs/subsample-vectors.json, the vectors the C++ code and
`reverify subsample` are tested against too."""
import json
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import reverify_job  # noqa: E402

VECTORS = json.loads((pathlib.Path(__file__).resolve().parents[2] / "docs" /
                      "subsample-vectors.json").read_text())


class Vectors(unittest.TestCase):
    def test_membership(self):
        for case in VECTORS["membership"]:
            with self.subTest(**case):
                h = reverify_job.subsample_hash(case["salt"], case["key"])
                self.assertEqual(f"{h:016x}", case["h"])
                self.assertEqual(reverify_job.in_subsample(case["key"], case["salt"],
                                                           case["fraction"]), case["member"])

    def test_boundary_in_exact_integers(self):
        for case in VECTORS["boundary"]:
            with self.subTest(**case):
                self.assertEqual(reverify_job.hash_in_subsample(int(case["h"], 16),
                                                                case["fraction"]), case["member"])

    def test_fraction_texts(self):
        for case in VECTORS["fractions"]:
            with self.subTest(text=case["text"]):
                if not case["valid"]:
                    with self.assertRaises(reverify_job.ContractError):
                        reverify_job.parse_fraction(case["text"])
                    continue
                f = reverify_job.parse_fraction(case["text"])
                self.assertEqual((f.text, f.numerator, f.digits),
                                 (case["canonical"], case["numerator"], case["digits"]))
                self.assertEqual(str(reverify_job.subsample_threshold(f)), case["threshold"])

    def test_csv_records_and_content_keys(self):
        csv = VECTORS["csv_content_keys"]
        records = reverify_job.csv_records(csv["document"].encode("utf-8"))
        self.assertEqual([r.decode("utf-8") for r in records], [r["bytes"] for r in csv["records"]])
        self.assertEqual([reverify_job.content_key(r) for r in records],
                         [r["key"] for r in csv["records"]])

    def test_keys_digest(self):
        case = VECTORS["keys_digest"]
        self.assertEqual(reverify_job.keys_digest(case["keys"]), (case["sha256"], case["distinct"]))


if __name__ == "__main__":
    unittest.main()
