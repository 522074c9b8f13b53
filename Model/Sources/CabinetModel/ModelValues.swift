// The calls @StoredModel writes for a type it knows only by name: an enum
// whose raw value DataBuffer writes, a StoredObject subclass (a reference, or
// an array of references), or an optional or array of enums. The compiler
// picks the overload by what the type is; each calls the DataBuffer method a
// hand-written class would, so the bytes are the same.

/// A raw value type `DataBuffer` writes: the raw values of enums a
/// `@StoredModel` class stores.
public protocol StorableRawValue {
    /// Writes the value with its own `DataBuffer` method.
    func write(to buffer: inout DataBuffer)
    /// Reads a value written by ``write(to:)``.
    static func read(from buffer: inout DataBuffer) throws -> Self
}

extension DataBuffer {
    /// Writes an enum's raw value (``writeRawValue(_:_:)``).
    @inlinable
    public mutating func writeModelValue<Value: RawRepresentable>(_ value: Value) where Value.RawValue: StorableRawValue {
        writeRawValue(value) { $1.write(to: &$0) }
    }

    /// Reads an enum written by `writeModelValue(_:)`.
    @inlinable
    public mutating func readModelValue<Value: RawRepresentable>(_ type: Value.Type) throws -> Value where Value.RawValue: StorableRawValue {
        try readRawValue(type) { try Value.RawValue.read(from: &$0) }
    }

    /// Writes a to-one reference (``writeReference(_:)``).
    @inlinable
    public mutating func writeModelValue<Object: StoredObject>(_ object: Object?) { writeReference(object) }

    /// Reads a to-one reference (``readReference(to:)``).
    @inlinable
    public mutating func readModelValue<Object: StoredObject>(_ type: Object?.Type) throws -> Object? {
        try readReference(to: Object.self)
    }

    /// Writes an optional enum (``writeOptional(_:_:)``).
    @inlinable
    public mutating func writeModelValue<Value: RawRepresentable>(_ value: Value?) where Value.RawValue: StorableRawValue {
        writeOptional(value) { $0.writeModelValue($1) }
    }

    /// Reads an optional enum.
    @inlinable
    public mutating func readModelValue<Value: RawRepresentable>(_ type: Value?.Type) throws -> Value? where Value.RawValue: StorableRawValue {
        try readOptional { try $0.readModelValue(Value.self) }
    }

    /// Writes a to-many relationship (``writeReferences(_:)``).
    @inlinable
    public mutating func writeModelValue<Object: StoredObject>(_ objects: [Object]) { writeReferences(objects) }

    /// Reads a to-many relationship (``readReferences(to:)``).
    @inlinable
    public mutating func readModelValue<Object: StoredObject>(_ type: [Object].Type) throws -> [Object] {
        try readReferences(to: Object.self)
    }

    /// Writes an array of enums (``writeArray(_:_:)``).
    @inlinable
    public mutating func writeModelValue<Value: RawRepresentable>(_ values: [Value]) where Value.RawValue: StorableRawValue {
        writeArray(values) { $0.writeModelValue($1) }
    }

    /// Reads an array of enums.
    @inlinable
    public mutating func readModelValue<Value: RawRepresentable>(_ type: [Value].Type) throws -> [Value] where Value.RawValue: StorableRawValue {
        try readArray(minimumElementSize: 1) { try $0.readModelValue(Value.self) }
    }

    /// What the compiler picks for a type no overload above takes: an error
    /// that says what @StoredModel can store.
    @available(*, unavailable, message: "@StoredModel stores a type it does not know only as a StoredObject subclass (T? or [T]) or an enum whose raw value DataBuffer writes: mark the property @Transient, or write read(from:) and write(to:)")
    public mutating func writeModelValue<Value>(_ value: Value) {}

    /// The read of the unavailable `writeModelValue(_:)`.
    @available(*, unavailable, message: "@StoredModel stores a type it does not know only as a StoredObject subclass (T? or [T]) or an enum whose raw value DataBuffer writes: mark the property @Transient, or write read(from:) and write(to:)")
    public mutating func readModelValue<Value>(_ type: Value.Type) throws -> Value { fatalError("unreachable") }
}
