import CabinetStorage
import Observation

// How a StoredObject takes part in Swift's Observation.
//
// `withObservationTracking` learns what a block read only through
// `ObservationRegistrar.access`, called with a registrar of the object read: the
// getter cannot tell beforehand whether a tracking block is running (the
// thread-local that says so is Observation's own), so every read of an observed
// object must call it, and every object read needs a registrar of its own: a
// call per read and an allocation per object, more than a store that no one
// observes should pay. So only the objects of a store
// opened with `ObjectStore.Options.observable` take part: `ClassEntry.adopt` sets
// their `observable` flag, which sits in the byte a getter tests anyway (is the
// object a fault?), so the objects of other stores pay nothing on reads, and a
// setter tests one more bit (`observed`: a registrar exists).
//
// The registrars live in a side table keyed by object, not in the object: a
// StoredObject is 32 bytes, and 8 more would move the typical subclass into the
// next malloc size class.
//
// A property is named to the registrar by a key path of StoredObject's own,
// `\.[observedField: offset]`, the offset of its storage in the object: the
// getter has the property's real key path only as an argument that, once used,
// is instantiated on every call, observed or not. Within one object (one
// registrar) the offsets tell the properties apart.

extension StoredObject: Observable {}

extension StoredObject {
    /// What Observation sees of the `@Stored` property whose storage is at `field`.
    subscript(observedField field: Int) -> Int { field }

    /// A `@Stored` property of an observable object is being read: tells
    /// Observation (a `withObservationTracking` block records it).
    @usableFromInline
    final func observeRead(field: Int) {
        let observation = ObjectObservation.of(self)
        observation.noteRead(field)
        observation.registrar.access(self, keyPath: ObjectObservation.keyPath(field))
    }

    /// A `@Stored` property of an observed object is about to change.
    @usableFromInline
    final func observeWillSet(field: Int) {
        ObjectObservation.of(self).registrar.willSet(self, keyPath: ObjectObservation.keyPath(field))
    }

    /// A `@Stored` property of an observed object has changed.
    @usableFromInline
    final func observeDidSet(field: Int) {
        ObjectObservation.of(self).registrar.didSet(self, keyPath: ObjectObservation.keyPath(field))
    }

    /// The object's content is about to be dropped (it becomes a fault again):
    /// its observers hear of every property they read.
    final func observedContentWillBeReplaced() {
        guard contentState.contains(.observed) else { return }
        ObjectObservation.of(self).contentWillBeReplaced(in: self)
    }
}

/// What Observation needs of one observed object: its registrar, and the
/// properties read through it (so that a change of the whole content, another
/// process's save turning it back into a fault, can name them).
///
/// Used only on the thread that uses the object (objects are confined to their
/// store's thread); the table that holds it is locked.
final class ObjectObservation: @unchecked Sendable {
    let registrar = ObservationRegistrar()
    /// The offsets of the properties read since the registrar was made.
    private var fields: [Int] = []

    /// The registrars of the observed objects that are alive.
    private static let table = Locked<[ObjectIdentifier: ObjectObservation]>([:])
    /// The key path of each field offset, made once.
    private static let keyPaths = Locked<[Int: KeyPath<StoredObject, Int>]>([:])

    static func keyPath(_ field: Int) -> KeyPath<StoredObject, Int> {
        keyPaths.withLock { paths in
            if let known = paths[field] { return known }
            let made = \StoredObject.[observedField: field]
            paths[field] = made
            return made
        }
    }

    /// `object`'s record, made (and the object flagged `observed`) on first use.
    static func of(_ object: StoredObject) -> ObjectObservation {
        let id = ObjectIdentifier(object)
        if object.contentState.contains(.observed), let existing = table.withLock({ $0[id] }) { return existing }
        let made = ObjectObservation()
        table.withLock { $0[id] = made }
        object.contentState.insert(.observed)
        return made
    }

    /// Drops `object`'s record: from its deinit, before its identifier can be reused.
    static func forget(_ object: StoredObject) {
        let id = ObjectIdentifier(object)
        // Freed after the lock is let go: the registrar's deinit cancels its observers.
        let record = table.withLock { $0.removeValue(forKey: id) }
        withExtendedLifetime(record) {}
    }

    /// Whether the object with this identifier has a record (for tests: a freed object leaves none).
    static func hasRecord(for id: ObjectIdentifier) -> Bool { table.withLock { $0[id] != nil } }

    func noteRead(_ field: Int) {
        if !fields.contains(field) { fields.append(field) }
    }

    /// Tells the observers of every property read so far that it changed: the
    /// object became a fault again, and its next read may find other values.
    func contentWillBeReplaced(in object: StoredObject) {
        for field in fields {
            let keyPath = ObjectObservation.keyPath(field)
            registrar.willSet(object, keyPath: keyPath)
            registrar.didSet(object, keyPath: keyPath)
        }
    }
}
