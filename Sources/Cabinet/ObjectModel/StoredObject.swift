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
open class StoredObject {
    // The bookkeeping below is read and written for every object in every fetch
    // and save loop. An ObjectStore and its objects are confined to one thread,
    // and no access here overlaps another, so the dynamic exclusivity checks
    // (a runtime call per access) are turned off for these properties.

    /// The object's row in its class's file: 0 until it is inserted, then
    /// fixed for its life (row IDs start at 2; row 1 holds the class metadata).
    @exclusivity(unchecked) public internal(set) var rowID: UInt32 = 0

    /// `false` while the object is a fault whose content has not been read
    /// from disk yet. New objects have content.
    @exclusivity(unchecked) public internal(set) var hasContent: Bool = true

    /// The store's bookkeeping for this object's class; `nil` while the object
    /// belongs to no store. Unretained: the store detaches its live objects when it closes.
    @usableFromInline var entry: ClassEntry? {
        get { entryReference?.takeUnretainedValue() }
        set { entryReference = newValue.map { Unmanaged.passUnretained($0) } }
    }
    // Unmanaged rather than unowned(unsafe): reading the latter makes a strong
    // reference (a retain and a release), which the deinit of every object paid.
    @exclusivity(unchecked) @usableFromInline var entryReference: Unmanaged<ClassEntry>?

    /// What the next save must do with this object.
    @exclusivity(unchecked) @usableFromInline var changeState: ChangeState = .clean

    /// Set when loading the content failed, so that a property read does not retry on every access.
    @exclusivity(unchecked) var contentLoadFailed = false

    /// The undo group in which the object's state was last recorded.
    @exclusivity(unchecked) @usableFromInline var undoStamp: UInt32 = 0

    /// Creates an object that belongs to no store; ``ObjectStore/insert(_:)`` adds it.
    public required init() {}

    deinit {
        entryReference?._withUnsafeGuaranteedRef { $0.objectDidDeinit(self) }
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
    open func dissolveAllRelationships() {}

    /// The name of the class's database file. Defaults to the unqualified class
    /// name, as BNRPersistence named its files; override it to rename a class
    /// without moving its data, or to map two classes to one file.
    open class var storedName: String { String(describing: self) }

    /// The version of the class's layout, written at the start of each record
    /// (see ``DataBuffer/version``). Raise it when ``write(to:)`` changes.
    open class var version: UInt8 { 1 }

    /// The store this object belongs to, or `nil`.
    public var store: ObjectStore? { entry?.store }

    /// Loads the content of a fault; called by `@Stored` getters and setters.
    @usableFromInline
    final func loadContentIfNeeded() {
        guard !hasContent, !contentLoadFailed, let entry else { return }
        entry.store?.loadFaultReportingErrors(self, entry: entry)
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

/// What a save must do with an object. `loading` marks an object whose content
/// is being read, so its setters record nothing.
@usableFromInline
enum ChangeState: UInt8 {
    case clean, inserted, updated, deleted, loading
}
