"""Self-checks of the oracle's own pieces: python3 -m unittest tools/reference/test_reference.py (in the venv).

Encoders here are written from model-spec §3 independently of gguf_read's decoders.
"""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gguf_read import TYPE_PQ2_0, TYPE_PTQ1_0, TYPE_Q2_0, decode  # noqa: E402
from gguf_to_hf import Hadamard, sylvester_hadamard, untile_rows  # noqa: E402


def trit_byte(trits: list[int]) -> int:
    """§3.4: 5 trits t0 most significant (or 4 trits shifted up by one place), byte = ceil(v·256/243)."""
    v = 0
    for t in trits:
        v = 3 * v + t
    if len(trits) == 4:
        v *= 3
    return (v * 256 + 242) // 243


def encode_ptq1_0(trits: np.ndarray, d: float) -> bytes:
    out = bytearray()
    for m in range(16):
        out.append(trit_byte([int(trits[16 * n + m]) for n in range(5)]))
    for m in range(8):
        out.append(trit_byte([int(trits[80 + 8 * n + m]) for n in range(5)]))
    for h in range(2):
        out.append(trit_byte([int(trits[120 + 2 * n + h]) for n in range(4)]))
    return bytes(out) + np.float16(d).tobytes()


def encode_2bit(codes: np.ndarray, d: float) -> bytes:
    qs = bytearray(len(codes) // 4)
    for j, c in enumerate(codes):
        qs[j // 4] |= int(c) << (2 * (j % 4))
    return np.float16(d).tobytes() + bytes(qs)


class CodecTest(unittest.TestCase):
    def test_ptq1_0_staged_order(self):
        rng = np.random.default_rng(1)
        trits = rng.integers(0, 3, size=(3, 128))
        scales = [0.5, 0.015625, 3.0]
        raw = b"".join(encode_ptq1_0(t, d) for t, d in zip(trits, scales))
        got = decode(TYPE_PTQ1_0, raw, 3 * 128).reshape(3, 128)
        want = (trits - 1) * np.array(scales)[:, None]
        np.testing.assert_array_equal(got, want.astype(np.float32))

    def test_pq2_0_codes_low_bits_first(self):
        rng = np.random.default_rng(2)
        codes = rng.integers(0, 4, size=(2, 128))
        raw = b"".join(encode_2bit(c, d) for c, d in zip(codes, [0.25, 2.0]))
        got = decode(TYPE_PQ2_0, raw, 256).reshape(2, 128)
        np.testing.assert_array_equal(got, ((codes - 1) * np.array([[0.25], [2.0]])).astype(np.float32))

    def test_q2_0_group_64(self):
        codes = np.arange(64) % 4
        got = decode(TYPE_Q2_0, encode_2bit(codes, 0.5), 64)
        np.testing.assert_array_equal(got, ((codes - 1) * 0.5).astype(np.float32))


def explicit_hadamard(block: int, widths: list[int], seed: int) -> Hadamard:
    """A Hadamard contract as a v1 file would give it, without a file."""
    had = Hadamard.__new__(Hadamard)
    rng = np.random.default_rng(seed)
    had.enabled, had.block, had.sign_mode = True, block, "explicit"
    had.signs = {w: rng.choice([-1.0, 1.0], size=w) for w in widths}
    had.h = sylvester_hadamard(block)
    return had


class FoldTest(unittest.TestCase):
    def test_unfold_inverts_the_fold_and_keeps_the_matvec(self):
        had = explicit_hadamard(16, [48, 64], seed=3)
        rng = np.random.default_rng(4)
        w = rng.standard_normal((5, 48))
        folded = had.fold_activation(w)  # w'_row = T_K(w_row), §4.2
        np.testing.assert_allclose(had.unfold_rows(folded), w, atol=1e-12)
        x = rng.standard_normal(48)
        np.testing.assert_allclose(folded @ had.fold_activation(x), w @ x, atol=1e-12)

    def test_inverse_is_transform_then_sign(self):
        had = explicit_hadamard(4, [4], seed=5)
        z = np.array([[1.0, 2.0, 3.0, 4.0]])
        want = had.signs[4] * (sylvester_hadamard(4) @ z[0]) / 2.0
        np.testing.assert_allclose(had.unfold_rows(z)[0], want)

    def test_fold_is_sign_then_transform(self):
        had = explicit_hadamard(4, [4], seed=6)
        x = np.array([1.0, -2.0, 0.5, 4.0])
        np.testing.assert_allclose(had.fold_activation(x), sylvester_hadamard(4) @ (had.signs[4] * x) / 2.0)


class LayoutTest(unittest.TestCase):
    def test_hadamard_is_sylvester(self):
        h = sylvester_hadamard(8)
        np.testing.assert_array_equal(h @ h, 8 * np.eye(8))
        self.assertEqual(h[3, 5], -1.0)  # popcount(3 & 5) = 1
        self.assertEqual(h[3, 3], 1.0)  # popcount(3) = 2

    def test_untile_inverts_appendix_a_tiling(self):
        n_k, rep, hs = 3, 2, 5
        grouped = np.arange(n_k * rep * hs)
        tiled = grouped.reshape(n_k, rep, hs).swapaxes(0, 1).reshape(-1)  # Appendix A grouped -> tiled
        np.testing.assert_array_equal(untile_rows(tiled, n_k, rep), grouped)
        # Tiled slot j holds grouped head (j mod n_k)·rep + j / n_k (§4.5).
        for j in range(n_k * rep):
            self.assertEqual(tiled[j * hs] // hs, (j % n_k) * rep + j // n_k)


if __name__ == "__main__":
    unittest.main()
