import MacroTesting
import Testing

/// `@StoredModel(version:fingerprints:)`: a layout that differs from the one
/// declared in the source is an error in the build, with a fix-it where one is safe.
@Suite(.macros(cabinetMacros, record: .missing))
struct FingerprintDiagnosticTests {
    @Test func declaredFingerprintsThatMatchAreNoError() {
        assertMacro {
            """
            @StoredModel(version: 2, fingerprints: [1: 0x4A84_163B, 2: 0x1E61_854D])
            final class Lamp: StoredObject {
                var name = ""
                var watts: UInt16 = 0
                @Since(2) var on = false
            }
            """
        } expansion: {
            """
            final class Lamp: StoredObject {
                @Cabinet.Stored
                var name = ""
                @Cabinet.Stored
                var watts: UInt16 = 0
                @Cabinet.Stored var on = false

                override func read(from buffer: inout Cabinet.DataBuffer) throws {
                    self.name = try buffer.readString()
                    self.watts = try buffer.readUInt16()
                    if buffer.version >= 2 {
                        self.on = try buffer.readBool()
                    } else {
                        self.on = false
                    }
                }

                override func write(to buffer: inout Cabinet.DataBuffer) {
                    buffer.writeString(self.name)
                    buffer.writeUInt16(self.watts)
                    buffer.writeBool(self.on)
                }

                override class var version: UInt8 {
                    2
                }

                override class var layoutFingerprints: [UInt8: UInt32] {
                    [
                        1: 0x4A84163B,  // String,UInt16
                        2: 0x1E61854D,  // String,UInt16,Bool
                    ]
                }
            }
            """
        }
    }

    @Test func aPropertyAddedWithoutANewVersionChangesEveryLayout() {
        assertMacro {
            """
            @StoredModel(version: 2, fingerprints: [1: 0x620750CB, 2: 0xCC61FC52])
            final class Album: StoredObject {
                var name = ""
                var songs: [Song] = []
                @Since(2) var year: UInt16 = 0
                var rating: UInt8 = 0
            }
            """
        } diagnostics: {
            """
            @StoredModel(version: 2, fingerprints: [1: 0x620750CB, 2: 0xCC61FC52])
                                                                      ┬─────────
                                                       │              ╰─ 🛑 the layout of Album's version 2 is now String,[Song],UInt16,UInt8 (fingerprint 0xA2D1C6DA), not the one declared (0xCC61FC52). If a store holds records of version 2, they would be misread: raise the version to 3, mark added properties @Since(3), keep removed or moved ones where they were marked @Removed(in: 3), and declare version 3's fingerprint. If none does, declare the new fingerprint
                                                       │                 ✏️ declare 0xA2D1C6DA, the new layout of version 2, if no store holds records of it
                                                       ┬─────────
                                                       ╰─ 🛑 the layout of Album's version 1 is now String,[Song],UInt8 (fingerprint 0x8B519BBB), not the one declared (0x620750CB): its records would be misread. A stored property was added, removed, moved or retyped without @Since or @Removed: undo that, then raise the version to 3, mark added properties @Since(3), keep removed or moved ones where they were marked @Removed(in: 3) (or, once upgradeAll has rewritten every record of version 1, remove its entry)
            final class Album: StoredObject {
                var name = ""
                var songs: [Song] = []
                @Since(2) var year: UInt16 = 0
                var rating: UInt8 = 0
            }
            """
        }
    }

    @Test func aPropertyOfTheCurrentVersionRemovedChangesOnlyItsLayout() {
        assertMacro {
            """
            @StoredModel(version: 2, fingerprints: [1: 0x620750CB, 2: 0xCC61FC52])
            final class Album: StoredObject {
                var name = ""
                var songs: [Song] = []
            }
            """
        } diagnostics: {
            """
            @StoredModel(version: 2, fingerprints: [1: 0x620750CB, 2: 0xCC61FC52])
                                                                      ┬─────────
                                                                      ╰─ 🛑 the layout of Album's version 2 is now String,[Song] (fingerprint 0x620750CB), not the one declared (0xCC61FC52). If a store holds records of version 2, they would be misread: raise the version to 3, mark added properties @Since(3), keep removed or moved ones where they were marked @Removed(in: 3), and declare version 3's fingerprint. If none does, declare the new fingerprint
                                                                         ✏️ declare 0x620750CB, the new layout of version 2, if no store holds records of it
            final class Album: StoredObject {
                var name = ""
                var songs: [Song] = []
            }
            """
        } fixes: {
            """
            @StoredModel(version: 2, fingerprints: [1: 0x620750CB, 2: 0x620750CB])
            final class Album: StoredObject {
                var name = ""
                var songs: [Song] = []
            }
            """
        } expansion: {
            """
            final class Album: StoredObject {
                @Cabinet.Stored
                var name = ""
                @Cabinet.Stored @CabinetModel._StorableCheck
                var songs: [Song] = []

                override func read(from buffer: inout Cabinet.DataBuffer) throws {
                    self.name = try buffer.readString()
                    self.songs = try buffer.readModelValue([Song].self)
                }

                override func write(to buffer: inout Cabinet.DataBuffer) {
                    buffer.writeString(self.name)
                    buffer.writeModelValue(self.songs)
                }

                override class var version: UInt8 {
                    2
                }

                override class var layoutFingerprints: [UInt8: UInt32] {
                    [
                        1: 0x620750CB,  // String,[Song]
                        2: 0x620750CB,  // String,[Song]
                    ]
                }
            }
            """
        }
    }

    @Test func aNewVersionMustDeclareItsFingerprint() {
        assertMacro {
            """
            @StoredModel(version: 3, fingerprints: [1: 0x620750CB, 2: 0xCC61FC52])
            final class Album: StoredObject {
                var name = ""
                var songs: [Song] = []
                @Since(2) @Removed(in: 3) var year: UInt16 = 0
                @Since(3) var fullYear: Int32 = 0
            }
            """
        } diagnostics: {
            """
            @StoredModel(version: 3, fingerprints: [1: 0x620750CB, 2: 0xCC61FC52])
                                                   ┬─────────────────────────────
                                                   ╰─ 🛑 fingerprints: declares no layout for version 3, Album's version: declare 3: 0xB42E707F (String,[Song],Int32), so that a change of it is an error
                                                      ✏️ declare 3: 0xB42E707F, the layout of version 3
            final class Album: StoredObject {
                var name = ""
                var songs: [Song] = []
                @Since(2) @Removed(in: 3) var year: UInt16 = 0
                @Since(3) var fullYear: Int32 = 0
            }
            """
        } fixes: {
            """
            @StoredModel(version: 3, fingerprints: [1: 0x620750CB, 2: 0xCC61FC52, 3: 0xB42E707F])
            final class Album: StoredObject {
                var name = ""
                var songs: [Song] = []
                @Since(2) @Removed(in: 3) var year: UInt16 = 0
                @Since(3) var fullYear: Int32 = 0
            }
            """
        } expansion: {
            """
            final class Album: StoredObject {
                @Cabinet.Stored
                var name = ""
                @Cabinet.Stored @CabinetModel._StorableCheck
                var songs: [Song] = []
                var year: UInt16 = 0
                @Cabinet.Stored var fullYear: Int32 = 0

                override func read(from buffer: inout Cabinet.DataBuffer) throws {
                    self.name = try buffer.readString()
                    self.songs = try buffer.readModelValue([Song].self)
                    if buffer.version >= 2 && buffer.version < 3 {
                        self.year = try buffer.readUInt16()
                    } else {
                        self.year = 0
                    }
                    if buffer.version >= 3 {
                        self.fullYear = try buffer.readInt32()
                    } else {
                        self.fullYear = 0
                    }
                }

                override func write(to buffer: inout Cabinet.DataBuffer) {
                    buffer.writeString(self.name)
                    buffer.writeModelValue(self.songs)
                    buffer.writeInt32(self.fullYear)
                }

                override class var version: UInt8 {
                    3
                }

                override class var layoutFingerprints: [UInt8: UInt32] {
                    [
                        1: 0x620750CB,  // String,[Song]
                        2: 0xCC61FC52,  // String,[Song],UInt16
                        3: 0xB42E707F,  // String,[Song],Int32
                    ]
                }
            }
            """
        }
    }

    @Test func anEmptyDeclarationIsFilledWithEveryVersion() {
        assertMacro {
            """
            @StoredModel(version: 2, fingerprints: [:])
            final class Lamp: StoredObject {
                var name = ""
                @Since(2) var on = false
            }
            """
        } diagnostics: {
            """
            @StoredModel(version: 2, fingerprints: [:])
                                                   ┬──
                                                   ╰─ 🛑 fingerprints: declares no layout for version 2, Lamp's version: declare 2: 0x6254E2A4 (String,Bool), so that a change of it is an error
                                                      ✏️ declare the layout of each version, 1 to 2
            final class Lamp: StoredObject {
                var name = ""
                @Since(2) var on = false
            }
            """
        } fixes: {
            """
            @StoredModel(version: 2, fingerprints: [1: 0x604F4858, 2: 0x6254E2A4])
            final class Lamp: StoredObject {
                var name = ""
                @Since(2) var on = false
            }
            """
        } expansion: {
            """
            final class Lamp: StoredObject {
                @Cabinet.Stored
                var name = ""
                @Cabinet.Stored var on = false

                override func read(from buffer: inout Cabinet.DataBuffer) throws {
                    self.name = try buffer.readString()
                    if buffer.version >= 2 {
                        self.on = try buffer.readBool()
                    } else {
                        self.on = false
                    }
                }

                override func write(to buffer: inout Cabinet.DataBuffer) {
                    buffer.writeString(self.name)
                    buffer.writeBool(self.on)
                }

                override class var version: UInt8 {
                    2
                }

                override class var layoutFingerprints: [UInt8: UInt32] {
                    [
                        1: 0x604F4858,  // String
                        2: 0x6254E2A4,  // String,Bool
                    ]
                }
            }
            """
        }
    }

    @Test func fingerprintsMustBeLiteralsOfVersionsTheClassHasHad() {
        assertMacro {
            """
            @StoredModel(fingerprints: [1: 0x604F4858, 0: 0x1, 1: 0x2, 2: 0x3, 4: fingerprint])
            final class Lamp: StoredObject {
                var name = ""
            }
            """
        } diagnostics: {
            """
            @StoredModel(fingerprints: [1: 0x604F4858, 0: 0x1, 1: 0x2, 2: 0x3, 4: fingerprint])
                                                                               ┬─────────────
                                                       │       │       │       ╰─ 🛑 write each entry of fingerprints: as a version from 1 to 255 and its fingerprint, both literals (1: 0x620750CB), not 4: fingerprint
                                                                       ┬
                                                       │       │       ╰─ 🛑 fingerprints: declares version 2, after the class's version 1: raise @StoredModel(version:) to 2 or remove the entry
                                                               ┬
                                                       │       ╰─ 🛑 fingerprints: declares version 1 twice
                                                       ┬──────
                                                       ╰─ 🛑 write each entry of fingerprints: as a version from 1 to 255 and its fingerprint, both literals (1: 0x620750CB), not 0: 0x1
            final class Lamp: StoredObject {
                var name = ""
            }
            """
        }
        assertMacro {
            """
            @StoredModel(fingerprints: lampFingerprints)
            final class Lamp: StoredObject {
                var name = ""
            }
            """
        } diagnostics: {
            """
            @StoredModel(fingerprints: lampFingerprints)
                                       ┬───────────────
                                       ╰─ 🛑 fingerprints: takes a dictionary literal of versions and their fingerprints, such as [1: 0x620750CB] (the expansion's layoutFingerprints shows them), not lampFingerprints
            final class Lamp: StoredObject {
                var name = ""
            }
            """
        }
    }

    @Test func aClassThatWritesItselfDeclaresNoFingerprints() {
        assertMacro {
            """
            @StoredModel(fingerprints: [1: 0x1])
            final class Lamp: StoredObject {
                var name = ""
                override func write(to buffer: inout DataBuffer) { buffer.writeString(name) }
            }
            """
        } diagnostics: {
            """
            @StoredModel(fingerprints: [1: 0x1])
                                       ┬───────
                                       ╰─ 🛑 Lamp writes its own write(to:), whose layout @StoredModel cannot see: remove fingerprints:
            final class Lamp: StoredObject {
                var name = ""
                override func write(to buffer: inout DataBuffer) { buffer.writeString(name) }
            }
            """
        }
    }
}
