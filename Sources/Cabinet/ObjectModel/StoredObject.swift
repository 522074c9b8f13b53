/// The base class of every object Cabinet stores.
///
/// Subclass it, mark the stored properties `@Stored`, and write them to and
/// read them from a ``DataBuffer`` in the same order:
/// ```swift
/// final class Song: StoredObject {
///     @Stored var title = ""
///     @Stored var seconds: UInt32 = 0
///
///     override func read(from buffer: inout DataBuffer) throws {
///         title = try buffer.readString()
///         seconds = try buffer.readUInt32()
///     }
///     override func write(to buffer: inout DataBuffer) {
///         buffer.writeString(title)
///         buffer.writeUInt32(seconds)
///     }
/// }
/// ```
/// All instances of one class live in one database file named ``storedName``.
/// An instance fetched as the target of a relationship starts as a *fault*
/// (``hasContent`` is `false`); reading any `@Stored` property loads it.
///
/// A `StoredObject` belongs to the store it was inserted into or fetched from,
/// and like the store it must be used from one thread (or actor) at a time.
///
/// It is `Observable`: the objects of a store opened with
/// ``ObjectStore/Options/observable`` tell Swift's Observation of every
/// `@Stored` property read and changed, so `withObservationTracking` (and
/// SwiftUI) sees them, as it sees SwiftData's models:
/// ```swift
/// let store = try ObjectStore(path: path, options: .init(observable: true))
/// withObservationTracking {
///     print(song.title)
/// } onChange: {
///     print("title changed")        // for a setter, an undo, a newer save read in
/// }
/// ```
/// Other stores' objects are not tracked, and pay a flag test per property
/// access for it (see <doc:ChangeTrackingAndUndo>).
open class StoredObject {
    // The bookkeeping below is read and written for every object in every fetch
    // and save loop. An ObjectStore and its objects are confined to one thread,
    // and no access here overlaps another, so the dynamic exclusivity checks
    // (a runtime call per access) are turned off for these properties. They are
    // final so that code inlined into other modules (the `@Stored` accessors of
    // every subclass) reads them directly instead of calling an accessor.
    //
    // It is 16 bytes, declared widest first: with Swift's 16-byte object header a
    // StoredObject is 32 bytes, so a subclass with a String and a number (52
    // bytes) fits malloc's 64-byte block instead of spilling into an 80-byte one.

    // Unmanaged rather than unowned(unsafe): reading the latter makes a strong
    // reference (a retain and a release), which the deinit of every object paid.
    @exclusivity(unchecked) @usableFromInline final var entryReference: Unmanaged<ClassEntry>?

    /// The object's row in its class's file: 0 until it is inserted, then
    /// fixed for its life (row IDs start at 2; row 1 holds the class metadata).
    @exclusivity(unchecked) public internal(set) final var rowID: UInt32 = 0

    /// The undo group in which the object's state was last recorded (see ``StoreUndoManager``).
    @exclusivity(unchecked) @usableFromInline final var undoStamp: UndoStamp = 0

    /// What the next save must do with this object.
    @exclusivity(unchecked) @usableFromInline final var changeState: ChangeState = .clean

    /// Whether the content is in memory (or why not), and whether the object is observed.
    @exclusivity(unchecked) @usableFromInline final var contentState = ContentState(rawValue: 0)

    /// The store's bookkeeping for this object's class; `nil` while the object
    /// belongs to no store. Unretained, and never dangling: an object with an
    /// entry is that entry's live instance of its row (`UniquingTable.insert`
    /// stops the program rather than let a second one in), and when the store
    /// closes it detaches every live object, or, for a fault, the entry keeps
    /// itself alive until the fault is freed (`ClassEntry.keepForFaults`).
    @usableFromInline final var entry: ClassEntry? {
        get { entryReference?.takeUnretainedValue() }
        set { entryReference = newValue.map { Unmanaged.passUnretained($0) } }
    }

    /// `false` while the object is a fault whose content has not been read
    /// from disk yet. New objects have content.
    public internal(set) final var hasContent: Bool {
        @inlinable get { !contentState.contains(.fault) }
        set {
            contentState.subtract([.fault, .failed])
            if !newValue { contentState.insert(.fault) }
        }
    }

    /// Set when loading the content failed, so that a property read does not retry on every access.
    final var contentLoadFailed: Bool {
        get { contentState.contains(.failed) }
        set {
            if newValue { contentState.formUnion([.fault, .failed]) } else { contentState.remove(.failed) }
        }
    }

    /// Creates an object that belongs to no store; ``ObjectStore/insert(_:)`` adds it.
    public required init() {}

    deinit {
        if _slowPath(contentState.contains(.observed)) { ObjectObservation.forget(self) }
        guard let reference = entryReference else { return }
        // The last fault of a closed store lets its entry go, once the entry's own code is done.
        if reference._withUnsafeGuaranteedRef({ $0.objectDidDeinit(self) }) { reference.release() }
    }

    /// Reads the object's content, in the order ``write(to:)`` wrote it.
    ///
    /// Use `buffer.version` to read records written by older versions of the class.
    /// Setting properties here is not tracked as a change.
    open func read(from buffer: inout DataBuffer) throws {}

    /// Writes the object's content.
    open func write(to buffer: inout DataBuffer) {}

    /// Called by ``ObjectStore/delete(_:)`` before the object is deleted: apply
    /// delete rules here (remove it from relationships, delete what it owns).
    open func prepareForDelete() {}

    /// Called when the store closes: set relationships to empty or `nil` so
    /// that cycles between objects (a playlist and its songs) are freed.
    ///
    /// Only set them; do not read them here. A ``StorePool`` closes a write
    /// block's context on the block's caller's thread while its writer runs the
    /// next blocks, and a ``StoredList`` of the finished block shares its nodes
    /// with the list the next block reads: reading it here could load a node
    /// the writer is loading too.
    open func dissolveAllRelationships() {}

    /// The name of the class's database file. Defaults to the unqualified class
    /// name, as BNRPersistence named its files; override it to rename a class
    /// without moving its data, or to map two classes to one file.
    open class var storedName: String { String(describing: self) }

    /// The version of the class's layout, written at the start of each record
    /// (see ``DataBuffer/version``). Raise it when ``write(to:)`` changes.
    open class var version: UInt8 { 1 }

    /// The indexes of this class (none by default). Override to declare them:
    ///
    /// ```swift
    /// override class var indexes: [StoredIndex] { [.value(\Song.artist), .fullText(\Song.title)] }
    /// ```
    /// Adding one builds it from the existing objects when the class is
    /// registered; removing one deletes its entries. See ``StoredIndex``.
    open class var indexes: [StoredIndex] { [] }

    /// A fingerprint of each version's record layout, by version (none by
    /// default). `@StoredModel` writes it: each version's stored property types
    /// in order, hashed.
    ///
    /// ```swift
    /// override class var layoutFingerprints: [UInt8: UInt32] { [1: 0x1C4F_2A93, 2: 0x88E0_01B7] }
    /// ```
    /// The store keeps the fingerprint of each version the class writes in the
    /// class's metadata row. Registering the class compares them with these (for
    /// the metadata's version and later): one that differs throws
    /// ``/CabinetStorage/CabinetError/Code-swift.struct/invalidModel``, since records of that version would be
    /// misread. A class without fingerprints is not checked, and a store that has
    /// none for a version is given this class's at the next save. Version 0 is
    /// never checked.
    open class var layoutFingerprints: [UInt8: UInt32] { [:] }

    /// The store this object belongs to, or `nil`.
    public var store: ObjectStore? { entry?.store }

    /// Loads the content of a fault: for a `@Stored` getter (``storedPropertyWillBeRead(field:)``) and ``ObjectStore/willUpdate(_:)``.
    final func loadContentIfNeeded() {
        guard !hasContent, !contentLoadFailed, let entry else { return }
        if let store = entry.store {
            store.loadFaultReportingErrors(self, entry: entry)
        } else {
            entry.reportClosedStore(readingFault: self)
        }
    }

    /// A `@Stored` property (its storage at `field`) is being read and the object is
    /// a fault, observable, or both: loads the content, tells Observation.
    @usableFromInline
    final func storedPropertyWillBeRead(field: Int) {
        if !hasContent { loadContentIfNeeded() }
        if contentState.contains(.observable) { observeRead(field: field) }
    }

    /// Records that a `@Stored` property is about to change.
    @inlinable
    final func storedPropertyWillChange() {
        // The common cases cost a compare or two: an object being read, an object
        // of no store, or one already tracked and already recorded for undo.
        let state = changeState
        if state == .loading { return }
        guard let entry else { return }
        if state != .clean && undoStamp == entry.undoStamp { return }
        storedPropertyWillChangeSlowPath()
    }

    @usableFromInline
    final func storedPropertyWillChangeSlowPath() {
        entry?.store?.willUpdate(self)
    }
}

/// Whether an object's content is in memory: loaded (or new, no flag), a fault
/// not read yet, or a fault whose record could not be read (not retried on
/// every access); and whether Observation sees it. Flags in one byte, so that a
/// `@Stored` getter tests a single byte against zero to find that it has nothing
/// to do (loaded, not observable) and the object stays 32 bytes.
@usableFromInline
struct ContentState: OptionSet, Sendable {
    @usableFromInline let rawValue: UInt8

    @inlinable init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The content is not in memory.
    @inlinable static var fault: ContentState { ContentState(rawValue: 1) }
    /// Reading the content failed (with `fault`).
    @inlinable static var failed: ContentState { ContentState(rawValue: 2) }
    /// The object belongs to an observable store: its getters tell Observation (``StoredObject``).
    @inlinable static var observable: ContentState { ContentState(rawValue: 4) }
    /// It has an `ObservationRegistrar` (``ObjectObservation``): its setters tell it.
    @inlinable static var observed: ContentState { ContentState(rawValue: 8) }
}

/// What a save must do with an object. `loading` marks an object whose content
/// is being read, so its setters record nothing.
@usableFromInline
enum ChangeState: UInt8 {
    case clean, inserted, updated, deleted, loading
}
