package labcheck;

import java.net.URI;
import javax.ws.rs.client.ClientBuilder;
import org.glassfish.jersey.client.ClientProperties;
import org.glassfish.jersey.client.JerseyClientBuilder;
import org.glassfish.jersey.jdkhttp.JdkHttpServerFactory;
import org.glassfish.jersey.server.ResourceConfig;

/**
 * Serves Bookinfo's reviews service (the sample's application.rest.LibertyRestEndpoint, unchanged)
 * on Jersey's JDK HTTP server instead of Open Liberty, at the context root and port the sample's
 * server.xml gives it.
 */
public final class Reviews {
    private Reviews() {}

    public static void main(String[] args) {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 9080;
        // The endpoint builds its ratings client with ClientBuilder.newBuilder().
        System.setProperty(ClientBuilder.JAXRS_DEFAULT_CLIENT_BUILDER_PROPERTY, LibertyClientBuilder.class.getName());
        ResourceConfig config = new ResourceConfig(application.rest.LibertyRestEndpoint.class);
        JdkHttpServerFactory.createHttpServer(URI.create("http://0.0.0.0:" + port + "/"), config);
        System.out.println("reviews: serving on port " + port);
    }

    /**
     * Jersey's client builder, taking the timeouts the endpoint sets under Open Liberty's
     * property names (10 s with black stars, 2.5 s otherwise) as Jersey's own.
     */
    public static final class LibertyClientBuilder extends JerseyClientBuilder {
        @Override
        public JerseyClientBuilder property(String name, Object value) {
            switch (name) {
                case "com.ibm.ws.jaxrs.client.connection.timeout":
                    return super.property(ClientProperties.CONNECT_TIMEOUT, value);
                case "com.ibm.ws.jaxrs.client.receive.timeout":
                    return super.property(ClientProperties.READ_TIMEOUT, value);
                default:
                    return super.property(name, value);
            }
        }
    }
}
