@_exported import Cabinet

/// Writes a ``StoredObject`` subclass's `read(from:)`, `write(to:)`, `version`,
/// `indexes` and `layoutFingerprints` from its properties, and makes each
/// stored property `@Stored`.
///
/// ```swift
/// import CabinetModel
///
/// @StoredModel(version: 2)
/// final class Album: StoredObject {
///     var name = ""
///     @Indexed var songs: [Song] = []       // a references index
///     @Since(2) var year: UInt16 = 0        // version-1 records read it as 0
///     @Transient var isExpanded = false     // not stored
/// }
/// ```
/// Each property is written by the `DataBuffer` method of its type, in
/// declaration order: the bytes of the class a careful person would write by
/// hand (docs/MODEL.md has the table). A member the class declares itself is
/// left as it is; a class that writes its own `read(from:)` calls the
/// generated `readStoredProperties(from:)` from it. A type the macro cannot
/// store is an error on its property.
///
/// `layoutFingerprints` hashes each version's layout (the types of the
/// properties its records hold, in order). The store keeps them in the class's
/// metadata row, and registering the class again with another layout for a
/// version its records were written in throws: a stored property removed or
/// moved without `@Removed(in:)` or `@Since(_:)` is found when the store
/// opens, before a record is misread.
///
/// Declare them with `fingerprints:` to have such a change refused by the
/// compiler instead: the macro compares each declared version's fingerprint with
/// the layout it reads from the properties, and a difference is an error (for
/// the class's own version, with a fix-it that declares the new fingerprint, for
/// a version no store holds records of yet). A class's version missing from
/// `fingerprints:` is an error whose fix-it declares it; start with `[:]`.
///
/// ```swift
/// @StoredModel(version: 2, fingerprints: [1: 0x620750CB, 2: 0xCC61FC52])
/// final class Album: StoredObject {
///     var name = ""
///     var songs: [Song] = []
///     @Since(2) var year: UInt16 = 0
/// }
/// ```
///
/// The class inherits from `StoredObject` itself: a subclass of another
/// stored class is an error, since the macro cannot see the superclass's
/// properties and a record has a single version.
@attached(member, names: named(read(from:)), named(readStoredProperties(from:)), named(write(to:)), named(version), named(indexes),
          named(layoutFingerprints))
@attached(memberAttribute)
public macro StoredModel(version: UInt8 = 1, fingerprints: [UInt8: UInt32] = [:]) =
    #externalMacro(module: "CabinetMacros", type: "StoredModelMacro")

/// A value index on the property (`StoredIndex.value`), or a references
/// index on an array of objects (`StoredIndex.references`).
///
/// ```swift
/// @Indexed var artist = ""
/// ```
@attached(peer)
public macro Indexed() = #externalMacro(module: "CabinetMacros", type: "MarkerMacro")

/// A full-text index of a `String` or `String?` property (`StoredIndex.fullText`).
///
/// ```swift
/// @FullText var lyrics: String? = nil
/// ```
@attached(peer)
public macro FullText() = #externalMacro(module: "CabinetMacros", type: "MarkerMacro")

/// A property `@StoredModel` neither stores nor tracks.
///
/// ```swift
/// @Transient var playCount = 0
/// ```
@attached(peer)
public macro Transient() = #externalMacro(module: "CabinetMacros", type: "MarkerMacro")

/// A property added in class version `version`: records of older versions do
/// not hold it, and objects read from them get its default value.
///
/// ```swift
/// @Since(2) var year: UInt16 = 0
/// ```
@attached(peer)
public macro Since(_ version: UInt8) = #externalMacro(module: "CabinetMacros", type: "MarkerMacro")

/// A property removed in class version `version`: records of older versions
/// hold it, so it is read from them (and so skipped in the bytes), and never
/// written again. It is not tracked; `read(from:)` sets it for old records only.
///
/// ```swift
/// @Removed(in: 3) var oldName = ""
/// ```
@attached(peer)
public macro Removed(in version: UInt8) = #externalMacro(module: "CabinetMacros", type: "MarkerMacro")

/// Added by `@StoredModel` to a property whose type it knows only by name (a
/// reference, an enum): makes a type it cannot store an error on that property.
/// Not for use by hand.
@attached(peer, names: prefixed(_cabinetStorable_))
public macro _StorableCheck() = #externalMacro(module: "CabinetMacros", type: "StorableCheckMacro")
