"""The job kit's PyTorch helpers (skipped where torch is not installed): setup() seeds torch and
applies the determinism settings, a DataLoader with worker processes draws the same augmentation
twice, and a torch imported after setup() is refused when the result is written."""
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import reverify_job  # noqa: E402

try:
    import numpy as np
    import torch
    from torch.utils.data import DataLoader, Dataset
except ImportError:
    torch = None

if torch is not None:
    class Noisy(Dataset):
        """Draws from a generator of its own, which only worker_init_fn seeds."""

        def __init__(self):
            self.rng = np.random.default_rng()

        def seed_worker(self, rng):
            self.rng = rng

        def __len__(self):
            return 8

        def __getitem__(self, index):
            return torch.tensor([index, self.rng.normal()])


@unittest.skipIf(torch is None, "torch is not installed")
class TorchHelpers(unittest.TestCase):
    def job(self, **env):
        return reverify_job.Job({"dataloader_workers": 2}, {"framework": 42, "dataloader": 123,
                                                            "augmentation": 7}, env)

    def draws(self, job):
        job.setup()
        loader = DataLoader(Noisy(), batch_size=4, shuffle=True, num_workers=2,
                            generator=job.loader_generator(), worker_init_fn=job.worker_init_fn)
        return torch.cat([batch for _, batch in job.batches(loader, 4)]).tolist()

    def test_setup_seeds_torch_and_sets_determinism(self):
        job = self.job()
        job.setup()
        self.assertEqual(job.seeded, ["python", "numpy", "torch"])
        self.assertEqual(torch.initial_seed(), 42)
        self.assertTrue(torch.are_deterministic_algorithms_enabled())
        self.assertFalse(torch.backends.cudnn.benchmark)
        self.assertEqual(torch.get_num_threads(), 1)

    def test_workers_draw_the_same_augmentation_twice_and_another_under_override(self):
        first, second = self.draws(self.job()), self.draws(self.job())
        self.assertEqual(first, second)
        self.assertNotEqual(first, self.draws(self.job(REVERIFY_SEED_OVERRIDE="5")))

    def test_torch_imported_after_setup_is_refused(self):
        script = ("import reverify_job\n"
                  "job = reverify_job.Job({}, {'framework': 1})\n"
                  "job.setup()\n"
                  "import torch\n"
                  "job.write_result(('accuracy', 1.0))\n")
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                 cwd=pathlib.Path(reverify_job.__file__).parent,
                                 env=dict(os.environ, REVERIFY_OUT=out))
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("torch was imported after job.setup()", run.stderr)

    def test_weights_from_a_state_dict(self):
        with tempfile.TemporaryDirectory() as out:
            model = torch.nn.Linear(2, 1)
            reverify_job.write_safetensors(pathlib.Path(out) / "m.safetensors", model.state_dict())
            data = (pathlib.Path(out) / "m.safetensors").read_bytes()
        self.assertIn(b'"bias":{"dtype":"F32","shape":[1]', data)
        self.assertIn(b'"format":"pt"', data)


if __name__ == "__main__":
    unittest.main()
