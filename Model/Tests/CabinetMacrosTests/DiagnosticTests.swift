import MacroTesting
import Testing

/// Every error @StoredModel reports, on the declaration it is about.
@Suite(.macros(cabinetMacros, record: .missing))
struct DiagnosticTests {
    @Test func aStructIsNoModel() {
        assertMacro {
            """
            @StoredModel
            struct Point { var x = 0 }
            """
        } diagnostics: {
            """
            @StoredModel
            ┬───────────
            ╰─ 🛑 @StoredModel applies to a class that inherits from StoredObject
            struct Point { var x = 0 }
            """
        }
    }

    @Test func aClassThatInheritsFromNothingIsNoModel() {
        assertMacro {
            """
            @StoredModel
            final class Point { var x = 0 }
            """
        } diagnostics: {
            """
            @StoredModel
            ┬───────────
            ╰─ 🛑 @StoredModel applies to a class that inherits from StoredObject
            final class Point { var x = 0 }
            """
        }
    }

    @Test func aVersionOutsideOneTo255IsAnError() {
        assertMacro {
            """
            @StoredModel(version: 0)
            final class Song: StoredObject { var title = "" }
            """
        } diagnostics: {
            """
            @StoredModel(version: 0)
                                  ┬
                                  ╰─ 🛑 @StoredModel(version:) takes a version number from 1 to 255, written as a literal, not 0
            final class Song: StoredObject { var title = "" }
            """
        }
    }

    @Test func declarationsTheRecordCannotHoldAreErrors() {
        assertMacro {
            """
            @StoredModel
            final class Song: StoredObject {
                var a = 0, b = 1
                let c = ""
                lazy var d = ""
                var e = makeDefault()
                var f: Int
            }
            """
        } diagnostics: {
            """
            @StoredModel
            final class Song: StoredObject {
                var a = 0, b = 1
                ┬───────────────
                ╰─ 🛑 declare one stored property per 'var', so that @StoredModel can give each its place in the record
                let c = ""
                ┬─────────
                ╰─ 🛑 'c' is a 'let': make it a 'var' (read(from:) sets it) or mark it @Transient
                lazy var d = ""
                ┬──────────────
                ╰─ 🛑 'd' is 'lazy', which a stored property cannot be: remove 'lazy' or mark it @Transient
                var e = makeDefault()
                ┬────────────────────
                ╰─ 🛑 write the type of 'e' ('var e: Type = ...'): @StoredModel picks the DataBuffer method by the type as written
                var f: Int
                ┬─────────
                ╰─ 🛑 give 'f' a default value: objects get it before their record is read, and records older than the property keep it
            }
            """
        }
    }

    @Test func typesWithNoDataBufferMethodAreErrorsOnTheirProperty() {
        assertMacro {
            """
            @StoredModel
            final class Song: StoredObject {
                var a: [String: Int] = [:]
                var b: (Int, Int) = (0, 0)
                var c: Set<Int> = []
                var d: StoredObject = Song()
                var e: () -> Void = {}
                var f: Box<Int> = Box()
                var g: any Sendable = 0
            }
            """
        } diagnostics: {
            """
            @StoredModel
            final class Song: StoredObject {
                var a: [String: Int] = [:]
                       ┬────────────
                       ╰─ 🛑 'a' cannot be stored: [String: Int] has no DataBuffer method (tuples, dictionaries, functions and existentials cannot be stored; use stored properties, arrays and optionals); or mark it @Transient
                var b: (Int, Int) = (0, 0)
                       ┬─────────
                       ╰─ 🛑 'b' cannot be stored: (Int, Int) has no DataBuffer method (tuples, dictionaries, functions and existentials cannot be stored; use stored properties, arrays and optionals); or mark it @Transient
                var c: Set<Int> = []
                       ┬───────
                       ╰─ 🛑 'c' cannot be stored: Set<...> has no DataBuffer method (store an array, an optional or a StoredList<T>, or write read(from:) and write(to:) yourself); or mark it @Transient
                var d: StoredObject = Song()
                       ┬───────────
                       ╰─ 🛑 'd' cannot be stored: a reference to StoredObject is optional: write 'StoredObject?' (StoredObject? and [StoredObject] are heterogeneous references); or mark it @Transient
                var e: () -> Void = {}
                       ┬─────────
                       ╰─ 🛑 'e' cannot be stored: () -> Void has no DataBuffer method (tuples, dictionaries, functions and existentials cannot be stored; use stored properties, arrays and optionals); or mark it @Transient
                var f: Box<Int> = Box()
                       ┬───────
                       ╰─ 🛑 'f' cannot be stored: Box<...> has no DataBuffer method (store an array, an optional or a StoredList<T>, or write read(from:) and write(to:) yourself); or mark it @Transient
                var g: any Sendable = 0
                       ┬───────────
                       ╰─ 🛑 'g' cannot be stored: any Sendable has no DataBuffer method (tuples, dictionaries, functions and existentials cannot be stored; use stored properties, arrays and optionals); or mark it @Transient
            }
            """
        }
    }

    /// A type the macro refuses by name is refused inside an array or an optional
    /// too, by the macro, rather than by the compiler in the generated methods.
    @Test func typesRefusedByNameAreErrorsInArraysAndOptionals() {
        assertMacro {
            """
            @StoredModel
            final class Song: StoredObject {
                var a: UUID = UUID()
                var b: [URL] = []
                var c: Character? = nil
                var d: [Any] = []
                var e: Foundation.Decimal = 0
            }
            """
        } diagnostics: {
            """
            @StoredModel
            final class Song: StoredObject {
                var a: UUID = UUID()
                       ┬───
                       ╰─ 🛑 'a' cannot be stored: UUID has no DataBuffer method (store an array, or its raw form: a String or Data); or mark it @Transient
                var b: [URL] = []
                       ┬────
                       ╰─ 🛑 'b' cannot be stored: URL has no DataBuffer method (store an array, or its raw form: a String or Data); or mark it @Transient
                var c: Character? = nil
                       ┬─────────
                       ╰─ 🛑 'c' cannot be stored: Character has no DataBuffer method (store an array, or its raw form: a String or Data); or mark it @Transient
                var d: [Any] = []
                       ┬────
                       ╰─ 🛑 'd' cannot be stored: Any has no DataBuffer method (tuples, dictionaries, functions and existentials cannot be stored; use stored properties, arrays and optionals); or mark it @Transient
                var e: Foundation.Decimal = 0
                       ┬─────────────────
                       ╰─ 🛑 'e' cannot be stored: Foundation.Decimal has no DataBuffer method (store an array, or its raw form: a String or Data); or mark it @Transient
            }
            """
        }
    }

    @Test func versionMarksMustNameVersionsTheClassHasHad() {
        assertMacro {
            """
            @StoredModel(version: 2)
            final class Song: StoredObject {
                @Since(3) var a = ""
                @Since(0) var b = ""
                @Removed(in: 3) var c = ""
                @Since(2) @Removed(in: 2) var d = ""
                @Since(two) var e = ""
            }
            """
        } diagnostics: {
            """
            @StoredModel(version: 2)
            final class Song: StoredObject {
                @Since(3) var a = ""
                ┬────────
                ╰─ 🛑 @Since(3) on 'a' names a version after the class's version 2: raise @StoredModel(version:) to 3 first
                @Since(0) var b = ""
                ┬────────
                ╰─ 🛑 @Since(0) on 'b': versions start at 1, and a property every version's records hold needs no @Since
                @Removed(in: 3) var c = ""
                ┬──────────────
                ╰─ 🛑 @Removed(in: 3) on 'c' names a version after the class's version 2: raise @StoredModel(version:) to 3 first
                @Since(2) @Removed(in: 2) var d = ""
                          ┬──────────────
                          ╰─ 🛑 @Removed(in: 2) on 'd' must name a version after the one that added it, 2
                @Since(two) var e = ""
                ┬──────────
                ╰─ 🛑 @Since takes a version number from 1 to 255, written as a literal, not two
            }
            """
        }
    }

    @Test func indexesMustFitTheirProperty() {
        assertMacro {
            """
            @StoredModel
            final class Song: StoredObject {
                @Transient @Indexed var a = 0
                @Indexed var b: [String] = []
                @FullText var c = 0
            }
            """
        } diagnostics: {
            """
            @StoredModel
            final class Song: StoredObject {
                @Transient @Indexed var a = 0
                ┬────────────────────────────
                ╰─ 🛑 'a' is @Transient, so it cannot also be @Indexed, @FullText, @Since or @Removed
                @Indexed var b: [String] = []
                ┬────────────────────────────
                ╰─ 🛑 'b' of type [String] cannot be @Indexed: index a value, an optional value or an array of StoredObjects
                @FullText var c = 0
                ┬──────────────────
                ╰─ 🛑 'c' of type Int cannot be @FullText: a full-text index reads a String or String?
            }
            """
        }
    }

    @Test func aSubclassOfAnotherStoredClassIsAnError() {
        assertMacro {
            """
            @StoredModel
            final class Single: Song {
                var bSide = ""
            }
            """
        } diagnostics: {
            """
            @StoredModel
            final class Single: Song {
                                ┬───
                                ╰─ 🛑 @StoredModel writes the whole record, so 'Single' must inherit from StoredObject itself, not from 'Song': the macro cannot see the superclass's stored properties, and a record has one version, the class's, for both. Keep what they share in a class of its own and refer to it (a 'Song?' property), or write this class's read(from:) and write(to:) by hand, calling super's first
                var bSide = ""
            }
            """
        }
    }

    @Test func theSuperclassMayBeSpelledWithItsModule() {
        assertMacro {
            """
            @StoredModel
            final class Single: Cabinet.StoredObject {
                var bSide = ""
            }
            """
        } expansion: {
            """
            final class Single: Cabinet.StoredObject {
                @Cabinet.Stored
                var bSide = ""

                override func read(from buffer: inout Cabinet.DataBuffer) throws {
                    self.bSide = try buffer.readString()
                }

                override func write(to buffer: inout Cabinet.DataBuffer) {
                    buffer.writeString(self.bSide)
                }

                override class var version: UInt8 {
                    1
                }

                override class var layoutFingerprints: [UInt8: UInt32] {
                    [
                        1: 0x604F4858,  // String
                    ]
                }
            }
            """
        }
    }
}
