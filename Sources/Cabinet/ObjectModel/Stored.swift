/// A property whose value is stored: reading it loads a fault's content once,
/// and setting it tells the store the object changed.
///
/// ```swift
/// final class Playlist: StoredObject {
///     @Stored var title = ""
///     @Stored var songs: [Song] = []
///     // read(from:) and write(to:) as usual
/// }
/// list.title = "Road trip"   // the store now saves `list` on the next save()
/// ```
/// Use it only in subclasses of ``StoredObject``. Plain (unwrapped) properties
/// work too; call ``ObjectStore/willUpdate(_:)`` before changing one. Only
/// `@Stored` properties take part in Observation (see ``StoredObject``).
@propertyWrapper
public struct Stored<Value>: StoredProperty {
    @usableFromInline var value: Value

    public init(wrappedValue: Value) {
        value = wrappedValue
    }

    @available(*, unavailable, message: "@Stored can only be used on properties of StoredObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }

    @inlinable
    public static subscript<Object: StoredObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Stored<Value>>
    ) -> Value {
        // The observation calls name the property by its storage's offset in the object,
        // not by `wrappedKeyPath`: a key path used anywhere in here is instantiated on
        // every call (swift_getKeyPath), while the offset folds to a constant. Each
        // accessor is inlined whatever its size: called instead, it gets the key paths
        // as values and goes through them (swift_modifyAtReferenceWritableKeyPath).
        @inline(__always) get {
            // One byte tested against zero: a loaded object of a store nobody observes goes straight on.
            if object.contentState.rawValue != 0 { object.storedPropertyWillBeRead(field: Stored.field(of: object, storageKeyPath)) }
            return object[keyPath: storageKeyPath].value
        }
        @inline(__always) set {
            object.storedPropertyWillChange()
            if _slowPath(object.contentState.contains(.observed)) {
                // One call, so that the setter stays small enough to be inlined into read(from:).
                Stored.setObserved(newValue, in: object, field: Stored.field(of: object, storageKeyPath))
            } else {
                object[keyPath: storageKeyPath].value = newValue
            }
        }
        // In-place mutation (`list.songs.append(song)`) without copying the value.
        @inline(__always) _modify {
            object.storedPropertyWillChange()
            let observed = object.contentState.contains(.observed)
            if _slowPath(observed) { object.observeWillSet(field: Stored.field(of: object, storageKeyPath)) }
            defer { if _slowPath(observed) { object.observeDidSet(field: Stored.field(of: object, storageKeyPath)) } }
            yield &object[keyPath: storageKeyPath].value
        }
    }

    /// Sets the property whose storage is at `field` in `object`, telling its registrar before and after.
    @usableFromInline @inline(never)
    static func setObserved(_ newValue: Value, in object: StoredObject, field: Int) {
        object.observeWillSet(field: field)
        // The storage's own address: `field` is where the compiler put it in this object.
        let storage = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()) + field
        storage.assumingMemoryBound(to: Stored<Value>.self).pointee.value = newValue
        object.observeDidSet(field: field)
    }

    /// Where the property's storage is in `object`, in bytes: what names it to Observation.
    @inlinable @inline(__always)
    static func field<Object: StoredObject>(of object: Object, _ storage: ReferenceWritableKeyPath<Object, Stored<Value>>) -> Int {
        let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        return withUnsafeMutablePointer(to: &object[keyPath: storage]) { UnsafeRawPointer($0) - base }
    }
}

/// What every `@Stored` property's storage is, whatever its value's type: for
/// registration to find a class's stored properties by reflection.
protocol StoredProperty {}
