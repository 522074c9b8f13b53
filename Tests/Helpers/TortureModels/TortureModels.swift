// The classes of the crash-torture test, shared by the child that saves them
// until it is killed (cabinet-torture) and the test that reads them back
// (CrashTortureTests): one definition, so the two can never disagree on a layout.
//
// Each save moves an amount between the one Left and the one Right (their sum
// stays 1,000) and appends a Receipt with the next serial number and Left's new
// balance, which its index file records too: four files per save.
import Cabinet
import CabinetRedis

public final class TortureLeft: StoredObject {
    override public class var storedName: String { "Left" }
    @Stored public var balance: Int64 = 0
    override public func read(from buffer: inout DataBuffer) throws { balance = try buffer.readInt64() }
    override public func write(to buffer: inout DataBuffer) { buffer.writeInt64(balance) }
}

public final class TortureRight: StoredObject {
    override public class var storedName: String { "Right" }
    @Stored public var balance: Int64 = 0
    override public func read(from buffer: inout DataBuffer) throws { balance = try buffer.readInt64() }
    override public func write(to buffer: inout DataBuffer) { buffer.writeInt64(balance) }
}

public final class TortureReceipt: StoredObject {
    override public class var storedName: String { "Receipt" }
    @Stored public var serial: UInt64 = 0
    @Stored public var leftBalance: Int64 = 0
    @Stored public var padding: [UInt8] = []
    /// Indexed, so every save also changes the index file (`Receipt.index`): a
    /// fourth file in the same journaled save, and queries a reader in another process runs.
    override public class var indexes: [StoredIndex] { [.value(\TortureReceipt.serial), .value(\TortureReceipt.leftBalance)] }
    override public func read(from buffer: inout DataBuffer) throws {
        serial = try buffer.readUInt64()
        leftBalance = try buffer.readInt64()
        padding = try buffer.readBytes()
    }
    override public func write(to buffer: inout DataBuffer) {
        buffer.writeUInt64(serial)
        buffer.writeInt64(leftBalance)
        buffer.writeBytes(padding)
    }
}

/// The torture store at `location`: a store directory, or a `redis://host:port/db/store` URL.
public func openTortureStore(_ location: String) throws -> ObjectStore {
    RedisAddress.isURL(location) ? try ObjectStore(backend: RedisBackend(url: location)) : try ObjectStore(path: location)
}
