// swift-tools-version:6.0
// The LogStore package: the library, its command-line tool and their tests.
// Benchmarks live in Benchmarks/, a package of their own, so that users of
// the library never resolve benchmark-only dependencies.
import PackageDescription

let package = Package(
    name: "LogStore",
    products: [
        .library(name: "LogStore", targets: ["LogStore"]),
        .executable(name: "logstore-tool", targets: ["logstore-tool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // liblz4 from the system (Debian: liblz4-dev).
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        // CRC32C with the CPU's instruction where it has one (SSE4.2, ARMv8 CRC).
        .target(name: "CLogStoreSupport"),
        .target(
            name: "LogStore",
            dependencies: ["CLZ4", "CLogStoreSupport"]
        ),
        // Scenario 1's app model, shared by the demo and the scenario's test.
        .target(
            name: "InventoryExample",
            dependencies: ["LogStore"],
            path: "Examples/Inventory"
        ),
        .executableTarget(
            name: "logstore-tool",
            dependencies: [
                "LogStore",
                "InventoryExample",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // A child process for the crash tests: appends transactions and
        // prints each acknowledged sequence number until it is killed.
        .executableTarget(
            name: "logstore-crash-child",
            dependencies: ["LogStore"],
            path: "Tests/CrashChild"
        ),
        // The fuzz targets (Fuzz/README.md): what each does with an input,
        // and the one executable that runs them. scripts/fuzz builds it with
        // libFuzzer; built plainly, it replays input files.
        .target(
            name: "LogStoreFuzzTargets",
            dependencies: ["LogStore"],
            path: "Fuzz/Targets"
        ),
        .executableTarget(name: "logstore-fuzz", dependencies: ["LogStoreFuzzTargets"], path: "Fuzz/Entry"),
        .testTarget(
            name: "LogStoreTests",
            dependencies: ["LogStore", "InventoryExample", "LogStoreFuzzTargets", "logstore-crash-child", "logstore-tool"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
