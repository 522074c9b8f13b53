// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Cabinet",
    products: [
        .library(name: "Cabinet", targets: ["Cabinet"]),
        .executable(name: "playlists", targets: ["Playlists"]),
    ],
    targets: [
        .systemLibrary(
            name: "CTokyoCabinet",
            pkgConfig: "tokyocabinet",
            providers: [.apt(["libtokyocabinet-dev", "zlib1g-dev"])]
        ),
        .target(
            name: "Cabinet",
            dependencies: ["CTokyoCabinet"]
        ),
        .executableTarget(
            name: "Playlists",
            dependencies: ["Cabinet"],
            path: "Examples/Playlists",
            exclude: ["demo.sh"]
        ),
        .executableTarget(
            name: "ReadmeExample",
            dependencies: ["Cabinet"],
            path: "Examples/ReadmeExample"
        ),
        // A second process for the locking tests: opens a store and holds it.
        .executableTarget(
            name: "cabinet-test-holder",
            dependencies: ["Cabinet"],
            path: "Tests/Helpers/StoreHolder"
        ),
        .testTarget(
            name: "CabinetTests",
            dependencies: ["Cabinet", "CTokyoCabinet"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
