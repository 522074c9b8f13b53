// swift-tools-version:6.0
import PackageDescription

// A Hummingbird 2 JSON API over notes and notebooks, twice: on Cabinet's StorePool
// (`notes-service`) and on GRDB's DatabasePool (`notes-service-grdb`), for
// `make service-bench`; and over dictionaries in memory (`notes-service-dictionary`),
// the ceiling of the routes themselves that the bench measures both against. Its own package, so nobody who depends on Cabinet builds Hummingbird.
let package = Package(
    name: "NotesService",
    platforms: [.macOS(.v15)],   // Mutex and Atomic (Synchronization)
    products: [
        .executable(name: "notes-service", targets: ["NotesServiceCabinet"]),
        .executable(name: "notes-service-grdb", targets: ["NotesServiceGRDB"]),
        .executable(name: "notes-service-dictionary", targets: ["NotesServiceDictionary"]),
    ],
    dependencies: [
        .package(name: "Cabinet", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // Hummingbird runs on it already; named here because the services put their store
        // beside the app in one ServiceGroup, closed after the app has drained on SIGTERM.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The tests' HTTP client: a real one, that streams a response's body as it comes.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // Routes, JSON and the command line, over a `NotesRepository` each service implements.
        .target(
            name: "NotesAPI",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "NotesServiceCabinet",
            dependencies: [
                "NotesAPI",
                .product(name: "Cabinet", package: "Cabinet"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "NotesServiceGRDB",
            dependencies: ["NotesAPI", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .executableTarget(name: "NotesServiceDictionary", dependencies: ["NotesAPI"]),
        // The Cabinet service in process, driven over loopback HTTP (`swift test --package-path Examples/NotesService`).
        .testTarget(
            name: "NotesServiceTests",
            dependencies: [
                "NotesAPI",
                "NotesServiceCabinet",
                .product(name: "Cabinet", package: "Cabinet"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
