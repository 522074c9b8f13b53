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
/// work too; call ``ObjectStore/willUpdate(_:)`` before changing one.
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
        get {
            if !object.hasContent { object.loadContentIfNeeded() }
            return object[keyPath: storageKeyPath].value
        }
        set {
            object.storedPropertyWillChange()
            object[keyPath: storageKeyPath].value = newValue
        }
        // In-place mutation (`list.songs.append(song)`) without copying the value.
        _modify {
            object.storedPropertyWillChange()
            yield &object[keyPath: storageKeyPath].value
        }
    }
}

/// What every `@Stored` property's storage is, whatever its value's type: for
/// registration to find a class's stored properties by reflection.
protocol StoredProperty {}
