// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Cabinet",
    products: [
        .library(name: "Cabinet", targets: ["Cabinet"]),
        // The storage layer alone (tables, files, journal, backends), for tools that need no objects.
        .library(name: "CabinetStorage", targets: ["CabinetStorage"]),
        // Stores on a Redis server or cluster (RedisBackend), through hiredis: its own
        // product, so the Cabinet library neither links nor needs libhiredis.
        .library(name: "CabinetRedis", targets: ["CabinetRedis"]),
        // The C modules, for the tools' package (Tools/: the speed test's raw engines).
        .library(name: "CTokyoCabinet", targets: ["CTokyoCabinet"]),
        .library(name: "CHiredis", targets: ["CHiredis"]),
        .executable(name: "playlists", targets: ["Playlists"]),
        // The kill-point harness's LD_PRELOAD shim (docs/CRASHPOINTS.md).
        .library(name: "KillPointShim", type: .dynamic, targets: ["KillPointShim"]),
    ],
    dependencies: [
        // The package's one dependency: where a store reports what it cannot throw (fault errors, recoveries).
        // The tools (the `cabinet` command, the speed test) and their GRDB and argument
        // parser are a package of their own, Tools/, so nobody who depends on Cabinet fetches them.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CTokyoCabinet",
            pkgConfig: "tokyocabinet",
            providers: [.apt(["libtokyocabinet-dev", "zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CHiredis",
            // No pkgConfig: hiredis.pc adds -D_FILE_OFFSET_BITS=64, which SwiftPM refuses with a
            // warning; the header is included as <hiredis/hiredis.h> from the system's include path.
            providers: [.apt(["libhiredis-dev"])]
        ),
        // Points Tokyo Cabinet's own sched_yield calls (Debian builds it in its
        // micro-yield mode) at a function that returns at once: TokyoCabinetYields.
        .target(
            name: "CTokyoCabinetYields",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // Bytes, tables, files, the journal, locks and the backends: knows no objects.
        .target(
            name: "CabinetStorage",
            dependencies: ["CTokyoCabinet", "CTokyoCabinetYields"]
        ),
        // Objects, their encoding, the store, undo, versioning, maintenance; re-exports CabinetStorage.
        .target(
            name: "Cabinet",
            dependencies: ["CabinetStorage", .product(name: "Logging", package: "swift-log")]
        ),
        // The Redis backend: implements the storage seam over hiredis; knows no objects either.
        .target(
            name: "CabinetRedis",
            dependencies: ["CabinetStorage", "CHiredis"]
        ),
        .executableTarget(
            name: "Playlists",
            dependencies: ["Cabinet"],
            path: "Examples/Playlists",
            exclude: ["demo.sh"]
        ),
        .executableTarget(
            name: "Versioning",
            dependencies: ["Cabinet"],
            path: "Examples/Versioning"
        ),
        // The README's example with its classes written by hand (the README's own, with
        // @StoredModel, is in Model/, the macro's package).
        .executableTarget(
            name: "HandWrittenExample",
            dependencies: ["Cabinet"],
            path: "Examples/HandWritten"
        ),
        .executableTarget(
            name: "PoolExample",
            dependencies: ["Cabinet"],
            path: "Examples/StorePool"
        ),
        .executableTarget(
            name: "RedisExample",
            dependencies: ["Cabinet", "CabinetRedis"],
            path: "Examples/Redis"
        ),
        .executableTarget(
            name: "QueriesExample",
            dependencies: ["Cabinet"],
            path: "Examples/Queries"
        ),
        .executableTarget(
            name: "LiveDataExample",
            dependencies: ["Cabinet"],
            path: "Examples/LiveData"
        ),
        // An app's code that imports Cabinet and nothing else: it builds only while every
        // app-facing type is reachable from `import Cabinet` (docs/PUBLIC-API.md).
        .target(
            name: "AppSurface",
            dependencies: ["Cabinet"],
            path: "Tests/Helpers/AppSurface"
        ),
        // A second process for the locking tests: opens a store and holds it.
        .executableTarget(
            name: "cabinet-test-holder",
            dependencies: ["Cabinet"],
            path: "Tests/Helpers/StoreHolder"
        ),
        // The writer of the live-store tests: saves when told, while the test reads the store.
        .executableTarget(
            name: "cabinet-test-writer",
            dependencies: ["Cabinet", "CabinetStorage", "TortureModels"],
            path: "Tests/Helpers/LiveWriter"
        ),
        // The classes of the crash-torture test, shared by its child and the test.
        .target(
            name: "TortureModels",
            dependencies: ["Cabinet", "CabinetRedis"],
            path: "Tests/Helpers/TortureModels"
        ),
        // The child of the crash-torture test: saves in a loop until killed.
        .executableTarget(
            name: "cabinet-torture",
            dependencies: ["Cabinet", "TortureModels"],
            path: "Tests/Helpers/Torture"
        ),
        // The child of the Redis big-save kill test: one staged save, killed somewhere in it.
        .executableTarget(
            name: "cabinet-test-big-save",
            dependencies: ["CabinetRedis", "CabinetStorage"],
            path: "Tests/Helpers/BigSave"
        ),
        // Opens a Tokyo Cabinet table and prints what became of Tokyo Cabinet's yields
        // (the test of CABINET_TOKYO_CABINET_YIELDS=keep needs a process of its own).
        .executableTarget(
            name: "cabinet-test-yields",
            dependencies: ["CabinetStorage"],
            path: "Tests/Helpers/Yields"
        ),
        // A process whose disk fills up in the middle of a save.
        .executableTarget(
            name: "cabinet-full-disk",
            dependencies: ["Cabinet"],
            path: "Tests/Helpers/FullDisk"
        ),
        // The hostile-file campaign of `make fuzz` (Tests/Helpers/HostileFiles/main.swift),
        // and in small, the corruption loop of the tests (CorruptionLoopTests).
        .executableTarget(
            name: "cabinet-hostile-files",
            dependencies: ["Cabinet"],
            path: "Tests/Helpers/HostileFiles"
        ),
        // A process that misuses a store (two threads, changes during save) and should die saying so.
        .executableTarget(
            name: "cabinet-misuse",
            dependencies: ["Cabinet"],
            path: "Tests/Helpers/Misuse"
        ),
        // The kill-point harness: a shim that kills or fails a process at its Nth
        // file-changing system call, and the child that runs each operation under it.
        .target(
            name: "KillPointShim",
            path: "Tests/Helpers/KillPointShim",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        .executableTarget(
            name: "cabinet-killpoint",
            dependencies: ["Cabinet", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Helpers/KillPoint"
        ),
        .testTarget(
            name: "CabinetTests",
            dependencies: ["Cabinet", "CabinetStorage", "CabinetRedis", "CTokyoCabinet", "TortureModels", "AppSurface", .product(name: "Logging", package: "swift-log")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
