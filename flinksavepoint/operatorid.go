package flinksavepoint

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
)

// OperatorID is Flink's 16-byte ID of an operator, under which a savepoint
// keeps the operator's state. Flink prints it as 32 lowercase hex digits
// (String); the metadata holds the same 16 bytes. The zero value is no
// operator's ID.
type OperatorID [16]byte

// String returns the ID as Flink prints it: 32 lowercase hex digits.
func (id OperatorID) String() string { return hex.EncodeToString(id[:]) }

// ParseOperatorID reads an ID as Flink prints it (32 hex digits, either
// case), as `uidHash` in a job or an operator's ID in Flink's web UI gives it.
// Errors match [ErrMalformed].
func ParseOperatorID(s string) (OperatorID, error) {
	var id OperatorID
	if len(s) != 32 {
		return id, fmt.Errorf("%w: operator id %q: want 32 hex digits", ErrMalformed, s)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("%w: operator id %q: want 32 hex digits", ErrMalformed, s)
	}
	return id, nil
}

// OperatorIDFromUID returns the OperatorID Flink gives an operator whose uid
// is set (DataStream#uid): the 128-bit MurmurHash3 (x64 variant, seed 0) of
// the uid's UTF-8 bytes, as StreamGraphHasherV2 computes it with Guava's
// Hashing.murmur3_128(0) and as the State Processor API's
// OperatorIdentifier.forUid does. An operator given an explicit uidHash has
// that hash as its ID instead ([ParseOperatorID]).
func OperatorIDFromUID(uid string) OperatorID {
	h1, h2 := murmur3x64_128([]byte(uid), 0)
	var id OperatorID
	binary.LittleEndian.PutUint64(id[:8], h1)
	binary.LittleEndian.PutUint64(id[8:], h2)
	return id
}

// murmur3x64_128 is MurmurHash3_x64_128 of Austin Appleby's reference, the
// function Guava's murmur3_128 implements; the hash's bytes are h1 then h2,
// each little-endian.
func murmur3x64_128(data []byte, seed uint32) (h1, h2 uint64) {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	h1, h2 = uint64(seed), uint64(seed)
	n := len(data)
	for len(data) >= 16 {
		k1 := binary.LittleEndian.Uint64(data)
		k2 := binary.LittleEndian.Uint64(data[8:])
		data = data[16:]
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
		h1 = bits.RotateLeft64(h1, 27)
		h1 += h2
		h1 = h1*5 + 0x52dce729
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
		h2 = bits.RotateLeft64(h2, 31)
		h2 += h1
		h2 = h2*5 + 0x38495ab5
	}
	var k1, k2 uint64
	switch len(data) {
	case 15:
		k2 ^= uint64(data[14]) << 48
		fallthrough
	case 14:
		k2 ^= uint64(data[13]) << 40
		fallthrough
	case 13:
		k2 ^= uint64(data[12]) << 32
		fallthrough
	case 12:
		k2 ^= uint64(data[11]) << 24
		fallthrough
	case 11:
		k2 ^= uint64(data[10]) << 16
		fallthrough
	case 10:
		k2 ^= uint64(data[9]) << 8
		fallthrough
	case 9:
		k2 ^= uint64(data[8])
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
		fallthrough
	case 8:
		k1 ^= uint64(data[7]) << 56
		fallthrough
	case 7:
		k1 ^= uint64(data[6]) << 48
		fallthrough
	case 6:
		k1 ^= uint64(data[5]) << 40
		fallthrough
	case 5:
		k1 ^= uint64(data[4]) << 32
		fallthrough
	case 4:
		k1 ^= uint64(data[3]) << 24
		fallthrough
	case 3:
		k1 ^= uint64(data[2]) << 16
		fallthrough
	case 2:
		k1 ^= uint64(data[1]) << 8
		fallthrough
	case 1:
		k1 ^= uint64(data[0])
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	h1 += h2
	h2 += h1
	return h1, h2
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}
