"""A small GGUF v3 reader (metadata + tensors) in numpy, written from model-spec §2 and §3.

Decodes F32, F16, BF16, PQ2_0 (142), PTQ1_0 (143) and mainline Q2_0 (42, group 64) to float32.
Tensors come back in numpy order: shape = reversed(ne), so a weight with ne = [K, N] is an [N, K] array
(rows = outputs), exactly the HF nn.Linear layout.
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass

import numpy as np

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32

# gguf metadata value types (model-spec §2.2)
_SCALAR_FORMATS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING = 8
_ARRAY = 9

# ggml tensor types we decode: id -> (name, values per block, bytes per block)
TYPE_F32, TYPE_F16, TYPE_BF16, TYPE_Q2_0, TYPE_PQ2_0, TYPE_PTQ1_0 = 0, 1, 30, 42, 142, 143
TENSOR_TYPES = {
    TYPE_F32: ("F32", 1, 4),
    TYPE_F16: ("F16", 1, 2),
    TYPE_BF16: ("BF16", 1, 2),
    TYPE_Q2_0: ("Q2_0", 64, 18),
    TYPE_PQ2_0: ("PQ2_0", 128, 34),
    TYPE_PTQ1_0: ("PTQ1_0", 128, 28),
}


class GGUFError(Exception):
    pass


@dataclass
class TensorInfo:
    name: str
    ne: tuple[int, ...]
    type_id: int
    offset: int  # relative to the data section

    @property
    def type_name(self) -> str:
        return TENSOR_TYPES.get(self.type_id, (f"type{self.type_id}",))[0]

    def byte_size(self) -> int:
        if self.type_id not in TENSOR_TYPES:
            raise GGUFError(f"tensor {self.name}: unsupported ggml type {self.type_id}")
        _, block, block_bytes = TENSOR_TYPES[self.type_id]
        if self.ne[0] % block:
            raise GGUFError(f"tensor {self.name}: ne[0]={self.ne[0]} not a multiple of {block}")
        rows = int(np.prod(self.ne[1:], dtype=np.int64)) if len(self.ne) > 1 else 1
        return rows * (self.ne[0] // block) * block_bytes


class _Cursor:
    def __init__(self, data: bytes, path: str):
        self.data = data
        self.pos = 0
        self.path = path

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise GGUFError(f"{self.path}: truncated at byte {self.pos} (wanted {n} bytes)")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def scalar(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        return self.take(self.scalar("<Q")).decode("utf-8")

    def value(self, vtype: int):
        if vtype in _SCALAR_FORMATS:
            return self.scalar(_SCALAR_FORMATS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            elem_type = self.scalar("<I")
            count = self.scalar("<Q")
            if elem_type in _SCALAR_FORMATS and elem_type != 7:
                dtype = np.dtype(_SCALAR_FORMATS[elem_type])
                raw = self.take(count * dtype.itemsize)
                return np.frombuffer(raw, dtype=dtype).tolist()
            return [self.value(elem_type) for _ in range(count)]
        raise GGUFError(f"{self.path}: unknown metadata value type {vtype} at byte {self.pos}")


class GGUFFile:
    """Parses a whole GGUF v3 file held in memory (the fixture files are small)."""

    def __init__(self, path: str):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        cur = _Cursor(self.data, path)
        if cur.take(4) != GGUF_MAGIC:
            raise GGUFError(f"{path}: bad magic")
        version = cur.scalar("<I")
        if version != 3:
            raise GGUFError(f"{path}: GGUF version {version}, expected 3")
        n_tensors = cur.scalar("<Q")
        n_kv = cur.scalar("<Q")
        self.metadata: dict[str, object] = {}
        self.metadata_types: dict[str, int] = {}
        for _ in range(n_kv):
            key = cur.string()
            vtype = cur.scalar("<I")
            self.metadata[key] = cur.value(vtype)
            self.metadata_types[key] = vtype
        self.tensors: dict[str, TensorInfo] = {}
        for _ in range(n_tensors):
            name = cur.string()
            n_dims = cur.scalar("<I")
            ne = tuple(cur.scalar("<q") for _ in range(n_dims))
            type_id = cur.scalar("<I")
            offset = cur.scalar("<Q")
            self.tensors[name] = TensorInfo(name, ne, type_id, offset)
        alignment = int(self.metadata.get("general.alignment", DEFAULT_ALIGNMENT))
        self.data_start = (cur.pos + alignment - 1) // alignment * alignment

    def get(self, key: str, default=None):
        return self.metadata.get(key, default)

    def raw(self, name: str) -> bytes:
        info = self.tensors[name]
        start = self.data_start + info.offset
        size = info.byte_size()
        if start + size > len(self.data):
            raise GGUFError(f"{self.path}: tensor {name} at {start}+{size} runs past the end of the file")
        return self.data[start : start + size]

    def tensor(self, name: str) -> np.ndarray:
        """Dequantised float32 array with shape reversed(ne)."""
        if name not in self.tensors:
            raise GGUFError(f"{self.path}: no tensor {name}")
        info = self.tensors[name]
        values = decode(info.type_id, self.raw(name), int(np.prod(info.ne)))
        return values.reshape(tuple(reversed(info.ne)))


def _blocks(raw: bytes, block_bytes: int) -> np.ndarray:
    return np.frombuffer(raw, dtype=np.uint8).reshape(-1, block_bytes)


def _fp16(two_bytes: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(two_bytes).view("<f2").astype(np.float32).reshape(-1, 1)


def _decode_2bit(blocks: np.ndarray, group: int) -> np.ndarray:
    """{fp16 d first; qs[group/4]}: code j at bits 2(j%4) of qs[j/4], value (code-1)*d."""
    d = _fp16(blocks[:, 0:2])
    qs = blocks[:, 2:]
    shifts = np.array([0, 2, 4, 6], dtype=np.uint8)
    codes = (qs[:, :, None] >> shifts[None, None, :]) & 3  # [blocks, group/4, 4]
    codes = codes.reshape(-1, group).astype(np.float32)
    return (codes - 1.0) * d


def _ptq1_0_tables() -> tuple[np.ndarray, np.ndarray]:
    """For each element e of a 128-block: the byte of {qs[24]; qh[2]} and the trit index n (§3.4)."""
    byte_of = np.empty(128, dtype=np.int64)
    trit_of = np.empty(128, dtype=np.int64)
    for n in range(5):
        for m in range(16):
            byte_of[16 * n + m], trit_of[16 * n + m] = m, n
        for m in range(8):
            byte_of[80 + 8 * n + m], trit_of[80 + 8 * n + m] = 16 + m, n
    for n in range(4):
        for h in range(2):
            byte_of[120 + 2 * n + h], trit_of[120 + 2 * n + h] = 24 + h, n
    return byte_of, trit_of


_PTQ_BYTE, _PTQ_TRIT = _ptq1_0_tables()


def _decode_ptq1_0(blocks: np.ndarray) -> np.ndarray:
    d = _fp16(blocks[:, 26:28])
    packed = blocks[:, _PTQ_BYTE].astype(np.uint32)  # [blocks, 128]
    pow3 = (3 ** _PTQ_TRIT).astype(np.uint32)
    trits = (((packed * pow3[None, :]) & 0xFF) * 3) >> 8
    return (trits.astype(np.float32) - 1.0) * d


def decode(type_id: int, raw: bytes, count: int) -> np.ndarray:
    if type_id == TYPE_F32:
        out = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    elif type_id == TYPE_F16:
        out = np.frombuffer(raw, dtype="<f2").astype(np.float32)
    elif type_id == TYPE_BF16:
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        out = bits.view(np.float32)
    elif type_id == TYPE_PQ2_0:
        out = _decode_2bit(_blocks(raw, 34), 128).reshape(-1)
    elif type_id == TYPE_Q2_0:
        out = _decode_2bit(_blocks(raw, 18), 64).reshape(-1)
    elif type_id == TYPE_PTQ1_0:
        out = _decode_ptq1_0(_blocks(raw, 28)).reshape(-1)
    else:
        raise GGUFError(f"unsupported ggml type {type_id}")
    if out.size != count:
        raise GGUFError(f"decoded {out.size} values, expected {count}")
    return out


def main(argv: list[str]) -> int:
    """Prints the metadata (arrays summarised) and the tensor table of a GGUF file."""
    if len(argv) != 2:
        print("usage: gguf_read.py FILE.gguf", file=sys.stderr)
        return 2
    g = GGUFFile(argv[1])
    for key, value in g.metadata.items():
        if isinstance(value, list) and len(value) > 8:
            value = f"[{len(value)} items: {value[:4]} ...]"
        elif isinstance(value, str) and len(value) > 120:
            value = f"{value[:120]!r}... ({len(value)} chars)"
        print(f"{key} = {value}")
    for info in g.tensors.values():
        print(f"{info.name}\t{info.type_name}\t{list(info.ne)}\toffset {info.offset}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
