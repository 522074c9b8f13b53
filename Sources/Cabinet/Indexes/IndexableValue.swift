import Foundation

/// A property type a value index can order: strings (by Unicode scalar value),
/// every integer type, `Float64` (NaN refused), `Bool`, `Date` and `Date?`
/// (`nil` first).
///
/// Each value becomes bytes that sort as the value does (``indexBytes(into:)``),
/// so an index is a B+ tree of those bytes followed by the row ID. `Bound` is
/// what a range query takes: the value itself, or for `Date?` a `Date`.
///
/// ```swift
/// override class var indexes: [StoredIndex] { [.value(\Song.seconds)] }
/// let long = try store.fetch(Song.self, where: \.seconds, in: 300...600)
/// ```
public protocol IndexableValue {
    associatedtype Bound: Comparable = Self
    /// Appends bytes that compare (unsigned, shorter first) as the values
    /// compare, none of them a prefix of another's; throws for a value that
    /// cannot be ordered (NaN).
    func indexBytes(into bytes: inout [UInt8]) throws(IndexValueError)
    /// What one end of a range query encodes as.
    static func boundBytes(_ bound: Bound, into bytes: inout [UInt8]) throws(IndexValueError)
}

extension IndexableValue where Bound == Self {
    public static func boundBytes(_ bound: Self, into bytes: inout [UInt8]) throws(IndexValueError) {
        try bound.indexBytes(into: &bytes)
    }
}

/// Why a value cannot go into an index.
public struct IndexValueError: Error, CustomStringConvertible {
    public let description: String
}

extension String: IndexableValue {
    /// UTF-8 (whose byte order is Unicode scalar order), each 0 byte written as
    /// 0 1, and 0 0 at the end: no string's bytes are a prefix of another's.
    public func indexBytes(into bytes: inout [UInt8]) throws(IndexValueError) {
        for byte in utf8 {
            bytes.append(byte)
            if byte == 0 { bytes.append(1) }
        }
        bytes.append(0)
        bytes.append(0)
    }
}

extension Bool: IndexableValue {
    /// `Bool` is not `Comparable`: a range of it is one of 0 (false) and 1 (true).
    public typealias Bound = UInt8

    public func indexBytes(into bytes: inout [UInt8]) throws(IndexValueError) { bytes.append(self ? 1 : 0) }

    public static func boundBytes(_ bound: UInt8, into bytes: inout [UInt8]) throws(IndexValueError) { bytes.append(bound) }
}

extension IndexableValue where Self: FixedWidthInteger {
    /// Big-endian, the sign bit flipped for signed types: the bytes sort as the numbers.
    public func indexBytes(into bytes: inout [UInt8]) throws(IndexValueError) {
        let flipped = Self.isSigned ? self ^ (Self(1) << (Self.bitWidth - 1)) : self
        withUnsafeBytes(of: flipped.bigEndian) { bytes.append(contentsOf: $0) }
    }
}

extension Int: IndexableValue {}
extension Int8: IndexableValue {}
extension Int16: IndexableValue {}
extension Int32: IndexableValue {}
extension Int64: IndexableValue {}
extension UInt: IndexableValue {}
extension UInt8: IndexableValue {}
extension UInt16: IndexableValue {}
extension UInt32: IndexableValue {}
extension UInt64: IndexableValue {}

extension Double: IndexableValue {
    /// IEEE 754 bits made to sort as the numbers: positive values with the sign
    /// bit set, negative ones with every bit inverted; -0 is stored as 0.
    public func indexBytes(into bytes: inout [UInt8]) throws(IndexValueError) {
        guard !isNaN else { throw IndexValueError(description: "NaN has no place in an index's order") }
        let bits = (self == 0 ? 0 : self).bitPattern
        let ordered = bits & (1 << 63) == 0 ? bits | (1 << 63) : ~bits
        withUnsafeBytes(of: ordered.bigEndian) { bytes.append(contentsOf: $0) }
    }
}

extension Date: IndexableValue {
    /// Its seconds since 2001 as a `Float64`.
    public func indexBytes(into bytes: inout [UInt8]) throws(IndexValueError) {
        try timeIntervalSinceReferenceDate.indexBytes(into: &bytes)
    }
}

extension Optional: IndexableValue where Wrapped: IndexableValue {
    public typealias Bound = Wrapped.Bound

    /// `nil` as 0, a value as 1 and the value's bytes: `nil` sorts first.
    public func indexBytes(into bytes: inout [UInt8]) throws(IndexValueError) {
        guard let value = self else {
            bytes.append(0)
            return
        }
        bytes.append(1)
        try value.indexBytes(into: &bytes)
    }

    public static func boundBytes(_ bound: Wrapped.Bound, into bytes: inout [UInt8]) throws(IndexValueError) {
        bytes.append(1)
        try Wrapped.boundBytes(bound, into: &bytes)
    }
}
