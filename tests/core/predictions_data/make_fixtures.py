#!/usr/bin/python3
"""Small .npy fixtures for tests/core/predictions_test.cpp, written by numpy itself.

Run from this folder: /usr/bin/python3 make_fixtures.py
"""
import numpy as np
from numpy.lib import format as npy_format

scores_1d = np.array([0.25, 0.5, 0.75, 1.0], dtype=np.float64)
scores_2d = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], dtype=np.float64)

np.save("f8_1d.npy", scores_1d)
np.save("f4_1d.npy", scores_1d.astype(np.float32))
np.save("f8_2d.npy", scores_2d)
for version in [(2, 0), (3, 0)]:
    with open("f8_2d_v%d.npy" % version[0], "wb") as f:
        npy_format.write_array(f, scores_2d, version=version)
np.save("fortran_2d.npy", np.asfortranarray(scores_2d))
np.save("big_endian.npy", scores_1d.astype(">f8"))
np.save("int64.npy", np.arange(4, dtype=np.int64))
np.save("nan.npy", np.array([0.1, np.nan, 0.3]))
np.save("inf_2d.npy", np.array([[0.1, 0.2], [np.inf, 0.3]], dtype=np.float32))
np.save("three_d.npy", np.zeros((2, 2, 2)))
