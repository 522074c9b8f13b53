import CabinetStorage
import Observation

// How a StoredObject takes part in Swift's Observation.
//
// `withObservationTracking` learns what a block read only through
// `ObservationRegistrar.access`, called with a registrar of the object read: the
// getter cannot tell beforehand whether a tracking block is running (the
// thread-local that says so is Observation's own), so every read of an observed
// object must call it, and every object read needs a registrar of its own. That
// is about a hundred instructions per read and an allocation per object, more
// than a store that no one observes should pay. So only the objects of a store
// opened with `ObjectStore.Options.observable` take part: `ClassEntry.adopt` sets
// their `observable` flag, which sits in the byte a getter tests anyway (is the
// object a fault?), so the objects of other stores pay nothing on reads, and a
// setter tests one more bit (`observed`: a registrar exists).
//
// The registrars live in a side table keyed by object, not in the object: a
// StoredObject is 32 bytes, and 8 more would move the typical subclass into the
// next malloc size class.

extension StoredObject: Observable {}

/// What Observation needs of one observed object: its registrar, and the key
/// paths read through it (so that a change of the whole content, another
/// process's save turning it back into a fault, can name them).
///
/// Used only on the thread that uses the object (objects are confined to their
/// store's thread); the table that holds it is locked.
@usableFromInline
final class ObjectObservation: @unchecked Sendable {
    let registrar = ObservationRegistrar()
    /// One per key path read since the registrar was made (the compiler hands each
    /// property's getter one key path instance, so identity tells them apart).
    private var properties: [any ObservedProperty] = []

    /// The registrars of the observed objects that are alive.
    private static let table = Locked<[ObjectIdentifier: ObjectObservation]>([:])

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

    fileprivate func noteRead<Object: StoredObject, Value>(_ keyPath: KeyPath<Object, Value>) {
        if properties.contains(where: { $0.keyPath === keyPath }) { return }
        properties.append(Property(keyPath: keyPath))
    }

    /// Tells the observers of every property read so far that it changed: the
    /// object became a fault again, and its next read may find other values.
    func contentWillBeReplaced(in object: StoredObject) {
        for property in properties { property.announceChange(of: object, to: registrar) }
    }
}

/// A key path that was read, with its types, so that a change can be announced for it.
private protocol ObservedProperty {
    var keyPath: AnyKeyPath { get }
    func announceChange(of object: StoredObject, to registrar: ObservationRegistrar)
}

private struct Property<Object: StoredObject, Value>: ObservedProperty {
    let typed: KeyPath<Object, Value>
    init(keyPath: KeyPath<Object, Value>) { typed = keyPath }
    var keyPath: AnyKeyPath { typed }

    func announceChange(of object: StoredObject, to registrar: ObservationRegistrar) {
        let object = unsafeDowncast(object, to: Object.self)
        registrar.willSet(object, keyPath: typed)
        registrar.didSet(object, keyPath: typed)
    }
}

extension StoredObject {
    /// A `@Stored` property of an observable object is being read: tells
    /// Observation (a `withObservationTracking` block records it).
    @usableFromInline
    static func observeRead<Object: StoredObject, Value>(of object: Object, _ keyPath: KeyPath<Object, Value>) {
        let observation = ObjectObservation.of(object)
        observation.noteRead(keyPath)
        observation.registrar.access(object, keyPath: keyPath)
    }

    /// A `@Stored` property of an observed object is about to change.
    @usableFromInline
    static func observeWillSet<Object: StoredObject, Value>(of object: Object, _ keyPath: KeyPath<Object, Value>) {
        ObjectObservation.of(object).registrar.willSet(object, keyPath: keyPath)
    }

    /// A `@Stored` property of an observed object has changed.
    @usableFromInline
    static func observeDidSet<Object: StoredObject, Value>(of object: Object, _ keyPath: KeyPath<Object, Value>) {
        ObjectObservation.of(object).registrar.didSet(object, keyPath: keyPath)
    }

    /// The object's content is about to be dropped (it becomes a fault again):
    /// its observers hear of every property they read.
    final func observedContentWillBeReplaced() {
        guard contentState.contains(.observed) else { return }
        ObjectObservation.of(self).contentWillBeReplaced(in: self)
    }
}
