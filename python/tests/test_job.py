"""The job kit's Job: reading the contract, seeds, steps, subsample mode and the outputs."""
import io
import json
import pathlib
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import reverify_job  # noqa: E402
from reverify_job import ContractError, Job  # noqa: E402

try:
    import numpy as np
except ImportError:  # the contract itself needs only the standard library
    np = None


class Contract(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)
        (self.dir / "config.json").write_text('{"steps": 10, "lr": 0.5}')
        (self.dir / "seeds.json").write_text('{"numpy": 1, "dataloader": 2}')

    def tearDown(self):
        self.tmp.cleanup()

    def env(self, **extra):
        env = {"REVERIFY_CONFIG": str(self.dir / "config.json"),
               "REVERIFY_SEEDS": str(self.dir / "seeds.json"),
               "REVERIFY_OUT": str(self.dir / "out")}
        env.update(extra)
        return env

    def test_config_and_seeds_merge_over_defaults(self):
        job = Job({"steps": 99, "hidden": 8}, {"numpy": 7, "python": 3}, self.env())
        self.assertEqual(job.config, {"steps": 10, "hidden": 8, "lr": 0.5})
        self.assertEqual(job.seeds, {"numpy": 1, "python": 3, "dataloader": 2})
        self.assertEqual(job.mode, "full")

    def test_seed_override_replaces_every_seed(self):
        job = Job({}, {"python": 3}, self.env(REVERIFY_SEED_OVERRIDE="17"))
        self.assertEqual(job.seeds, {"python": 17, "numpy": 17, "dataloader": 17})
        self.assertNotEqual(job.derive_seed("dataloader", 0), Job({}, {}, self.env()).derive_seed(
            "dataloader", 0))

    def test_a_missing_seed_is_an_error_not_a_fallback(self):
        job = Job({}, {}, self.env())
        with self.assertRaisesRegex(ContractError, "seed 'augmentation'.*add it"):
            job.seed("augmentation")

    def test_derived_seeds_are_stable_and_distinct(self):
        job = Job({}, {}, self.env())
        self.assertEqual(job.derive_seed("dataloader", 1), Job({}, {}, self.env()).derive_seed(
            "dataloader", 1))
        self.assertNotEqual(job.derive_seed("dataloader", 1), job.derive_seed("dataloader", 2))
        self.assertEqual(job.random("numpy").random(), Job({}, {}, self.env()).random(
            "numpy").random())

    def test_malformed_variables_name_themselves(self):
        with self.assertRaisesRegex(ContractError, "REVERIFY_MODE='fast'"):
            Job({}, {}, self.env(REVERIFY_MODE="fast"))
        with self.assertRaisesRegex(ContractError, "REVERIFY_MAX_STEPS=None"):
            Job({}, {}, self.env(REVERIFY_MODE="steps"))
        with self.assertRaisesRegex(ContractError, "subsample fraction '0.3e0'"):
            Job({}, {}, self.env(REVERIFY_MODE="subsample", REVERIFY_SUBSAMPLE_FRACTION="0.3e0",
                                 REVERIFY_SUBSAMPLE_SALT="s"))
        with self.assertRaisesRegex(ContractError, "REVERIFY_SUBSAMPLE_SALT"):
            Job({}, {}, self.env(REVERIFY_MODE="subsample", REVERIFY_SUBSAMPLE_FRACTION="0.3"))
        (self.dir / "seeds.json").write_text("[1]")
        with self.assertRaisesRegex(ContractError, "REVERIFY_SEEDS=.*JSON object"):
            Job({}, {}, self.env())

    def test_steps_mode_stops_at_n(self):
        job = Job({}, {}, self.env(REVERIFY_MODE="steps", REVERIFY_MAX_STEPS="3"))
        self.assertEqual(job.steps(10), 3)
        self.assertEqual(job.steps(2), 2)
        for value in (1.0, 0.5, 0.25):
            job.record_loss(value)
        with self.assertRaisesRegex(ContractError, "step 4 recorded, but REVERIFY_MAX_STEPS is 3"):
            job.record_loss(0.1)
        batches = list(job.batches([["a"], ["b"]], job.steps(10)))
        self.assertEqual(batches, [(0, ["a"]), (1, ["b"]), (2, ["a"])])

    def test_subsample_schedule_in_exact_integers(self):
        job = Job({}, {}, self.env(REVERIFY_MODE="subsample", REVERIFY_SUBSAMPLE_FRACTION="0.3",
                                   REVERIFY_SUBSAMPLE_SALT="s"))
        self.assertEqual(job.steps(10), 3)  # ceil(10 * 0.3 as a double) would be 4
        self.assertEqual(job.scaled(1500), 450)
        self.assertEqual(Job({}, {}, self.env()).steps(10), 10)
        self.assertEqual(job.epoch_steps(5, 9), 45)  # the epochs kept: never scaled twice
        steps_job = Job({}, {}, self.env(REVERIFY_MODE="steps", REVERIFY_MAX_STEPS="20"))
        self.assertEqual(steps_job.epoch_steps(5, 9), 20)

    def test_subsample_mask_reports_the_drawn_keys(self):
        job = Job({}, {}, self.env(REVERIFY_MODE="subsample", REVERIFY_SUBSAMPLE_FRACTION="0.25",
                                   REVERIFY_SUBSAMPLE_SALT="digits-subsample-1"))
        keys = [f"optdigits-{i:04d}" for i in range(400)]
        mask = job.subsample_mask(keys, key="the id column")
        drawn = [k for k, m in zip(keys, mask) if m]
        self.assertTrue(60 < len(drawn) < 140, len(drawn))
        self.assertEqual(drawn, [k for k in keys
                                 if reverify_job.in_subsample(k, "digits-subsample-1", "0.25")])
        report = job.subsample_report
        self.assertEqual((report["candidates"], report["records"], report["key"], report["fraction"]),
                         (400, len(drawn), "the id column", "0.25"))
        written = (self.dir / "out" / "subsample-keys.txt").read_bytes()
        self.assertEqual(written, "".join(k + "\n" for k in sorted(drawn)).encode())
        self.assertEqual(report["keys_sha256"], reverify_job.keys_digest(drawn)[0])
        result = job.write_result(("accuracy", 0.5), predictions=None, weights=None)
        self.assertEqual(result["subsample"], report)

    def test_subsample_mode_without_a_draw_refuses_to_write_a_result(self):
        job = Job({}, {}, self.env(REVERIFY_MODE="subsample", REVERIFY_SUBSAMPLE_FRACTION="1",
                                   REVERIFY_SUBSAMPLE_SALT="s"))
        with self.assertRaisesRegex(ContractError, "never drew its subsample"):
            job.write_result(("accuracy", 0.5))

    def test_full_mode_keeps_every_record(self):
        job = Job({}, {}, self.env())
        self.assertEqual(job.subsample_mask(["a", "b"]), [True, True])
        self.assertIsNone(job.subsample_report)

    def test_result_json_shape(self):
        job = Job({}, {}, self.env())
        job.record_loss(2.5)
        job.write_result(("accuracy", 0.75), segments={"digit=1": {"accuracy": 1}}, examples=4,
                         segment_examples={"digit=1": 1}, extra={"validation": {"accuracy": 0.5}})
        result = json.loads((self.dir / "out" / "result.json").read_text())
        self.assertEqual(result, {
            "primary": {"name": "accuracy", "value": 0.75, "examples": 4},
            "segments": {"digit=1": {"accuracy": 1.0}}, "segment_examples": {"digit=1": 1},
            "steps": {"metric": "loss", "values": [2.5]}, "predictions": "predictions.npy",
            "weights": "model.safetensors", "validation": {"accuracy": 0.5}})


class Formats(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    @unittest.skipIf(np is None, "numpy is not installed")
    def test_npy_from_lists_is_what_numpy_writes(self):
        for rows in ([0.5, 1.25, -2.0], [[0.1, 0.9], [0.7, 0.3], [1.0, 0.0]]):
            for dtype in ("float32", "float64"):
                reverify_job.write_npy(self.dir / "a.npy", rows, dtype)
                reverify_job.write_npy(self.dir / "b.npy", np.array(rows), dtype)
                self.assertEqual((self.dir / "a.npy").read_bytes(), (self.dir / "b.npy").read_bytes())
                np.testing.assert_array_equal(np.load(self.dir / "a.npy"), np.array(rows, dtype))

    @unittest.skipIf(np is None, "numpy is not installed")
    def test_safetensors_layout(self):
        reverify_job.write_safetensors(self.dir / "m.safetensors",
                                       {"b": np.arange(3, dtype=np.int64),
                                        "a": np.ones((2, 2), dtype=np.float64)}, None)
        data = (self.dir / "m.safetensors").read_bytes()
        size = struct.unpack("<Q", data[:8])[0]
        self.assertEqual(size % 8, 0)
        header = json.loads(data[8:8 + size])
        self.assertEqual(header["a"], {"dtype": "F64", "shape": [2, 2], "data_offsets": [0, 32]})
        self.assertEqual(header["b"], {"dtype": "I64", "shape": [3], "data_offsets": [32, 56]})
        self.assertEqual(data[8 + size + 32:], np.arange(3, dtype="<i8").tobytes())
        reverify_job.write_safetensors(self.dir / "c.safetensors",
                                       {"a": np.ones(2, dtype=np.float64)}, "float32")
        self.assertIn(b'"F32"', (self.dir / "c.safetensors").read_bytes())

    def test_cli_prints_the_rule(self):
        out = io.StringIO()
        sys.stdout, saved = out, sys.stdout
        try:
            reverify_job._main(["optdigits-0001", "--fraction", "0.25", "--salt", "s"])
        finally:
            sys.stdout = saved
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0], "fraction 0.25: members are the keys with h < 4611686018427387904")
        h = reverify_job.subsample_hash("s", "optdigits-0001")
        member = "in " if reverify_job.in_subsample("optdigits-0001", "s", "0.25") else "out"
        self.assertEqual(lines[1], f"{h:016x}  {member}  optdigits-0001")


if __name__ == "__main__":
    unittest.main()
