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
        get {
            // One byte tested against zero: a loaded object of a store nobody observes goes straight on.
            let state = object.contentState
            if state.rawValue != 0 {
                if state.contains(.fault) { object.loadContentIfNeeded() }
                if state.contains(.observable) { StoredObject.observeRead(of: object, wrappedKeyPath) }
            }
            return object[keyPath: storageKeyPath].value
        }
        set {
            object.storedPropertyWillChange()
            if _slowPath(object.contentState.contains(.observed)) {
                StoredObject.observeWillSet(of: object, wrappedKeyPath)
                object[keyPath: storageKeyPath].value = newValue
                StoredObject.observeDidSet(of: object, wrappedKeyPath)
            } else {
                object[keyPath: storageKeyPath].value = newValue
            }
        }
        // In-place mutation (`list.songs.append(song)`) without copying the value.
        _modify {
            object.storedPropertyWillChange()
            if _slowPath(object.contentState.contains(.observed)) {
                StoredObject.observeWillSet(of: object, wrappedKeyPath)
                defer { StoredObject.observeDidSet(of: object, wrappedKeyPath) }
                yield &object[keyPath: storageKeyPath].value
            } else {
                yield &object[keyPath: storageKeyPath].value
            }
        }
    }
}

/// What every `@Stored` property's storage is, whatever its value's type: for
/// registration to find a class's stored properties by reflection.
protocol StoredProperty {}
