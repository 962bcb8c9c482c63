import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import jakarta.websocket.DeploymentException;
import jakarta.websocket.server.ServerContainer;

public final class EchoListener implements ServletContextListener {
    @Override
    public void contextInitialized(ServletContextEvent event) {
        ServerContainer container = (ServerContainer) event.getServletContext()
                .getAttribute(ServerContainer.class.getName());
        try {
            container.addEndpoint(EchoEndpoint.class);
        } catch (DeploymentException e) {
            throw new IllegalStateException(e);
        }
    }
}
